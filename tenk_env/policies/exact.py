"""Exact evaluation of the zoo's deterministic agents, and their exact best responses.

* :func:`exact_eval` (``tenk solve eval PRESET A B``): P(A beats B) seat by seat, no
  sampling, for A, B among ``optimal``, ``maxscore``, ``dicenow``, ``breakeven``,
  ``greedy[:N]``, ``hold[:N]`` and ``br:BOT``; cached on disk.
* :func:`best_response` (``tenk solve best-response PRESET BOT``): the policy that wins
  most often against BOT, with its exact win rate seat by seat; cached on disk.
* ``br:BOT`` (:class:`BestResponseAgent`): that policy as an agent; ``equilibrium``
  (:class:`EquilibriumAgent`): the symmetric 2- or 3-player equilibrium's strategy.
* Trained afterstate agents (``afterstate:PATH``, ``zoo:NAME``; 2 players, features v2):
  their moves are the backward induction on their net's values of the positions their turns
  hand on (:meth:`~tenk_env.policies.afterstate.AfterstateAgent.value_grid`), with the last turns
  exact, so the evaluator follows them as it follows ``optimal`` (a
  :class:`~tenk_env.solve.evaluate.SelfValued` policy): their exact win rate against any of
  the above, and against ``optimal`` their exact distance from perfect play.

The bots are followed through their batched forms (:mod:`tenk_env.policies.batched`), the same
decision code that matches and tournaments run and that ``tests/core/test_vector.py`` holds to
the scalar agents move for move: the exact evaluator poses each position to the batched
agent in a :class:`~tenk_env.vector.BatchedGame` set to it and reads the move back, so
every bot's logic stays in one place. ``tests/solve/test_exact.py`` checks the tabulated moves
against the scalar agents, roll by roll.

Speed: a bot's moves depend on the score situation only through a few quantities (the
entry flag, dicenow's bars, breakeven's weight, the lead in a final turn...).
:meth:`BotPolicy.situation_key` names them, reading them with the bots' own functions
where the bots have them (``dicenow_bar``, ``breakeven_weight``), so that situations that
must get the same moves share one tabulation: a few dozen instead of one per score state.
``tests/solve/test_exact.py`` tabulates sampled situations one by one and compares them with
their key's tabulation, so a key that merged two situations a bot tells apart fails there.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from tenk_env.closure import closure_hash
from tenk_env.game import Game
from tenk_env.jit import njit
from tenk_env.policies.afterstate import AfterstateAgent
from tenk_env.policies.base import AGENTS, AgentError, make_agent
from tenk_env.policies.batched import batched_agent
from tenk_env.policies.heuristic import (
    BreakEvenAgent,
    DiceNowAgent,
    GreedyAgent,
    HoldAgent,
    Situation,
    breakeven_weight,
    context,
    dicenow_bar,
)
from tenk_env.policies.optimal import MaxScoreAgent
from tenk_env.rules import Ruleset, did_you_mean, load_ruleset
from tenk_env.solve.best_response import BestResponse, br_cache_key, solve_best_response
from tenk_env.solve.eq_seat import (
    SeatBestResponse,
    SeatVsEquilibrium,
    best_response_beside_equilibrium,
    evaluate_beside_equilibrium,
)
from tenk_env.solve.equilibrium import check_equilibrium_rules, solve_equilibrium
from tenk_env.solve.evaluate import (
    THETA,
    EvalResult,
    ExactPolicy,
    SelfValued,
    Tabulated,
    cached_eval,
    class_rolls,
    eval_cache_key,
    evaluate_policies,
    optimal_key,
    optimal_policy,
)
from tenk_env.solve.game import GameSolution, check_exact_rules, solve_game
from tenk_env.solve.multi import MultiBestResponse, MultiEval, best_response_multi, check_multi_rules, evaluate_multi
from tenk_env.solve.policy import choose, move_values
from tenk_env.solve.regret import state_key
from tenk_env.solve.spec import SolverError, Spec
from tenk_env.tables import Keep, get_tables
from tenk_env.vector import BatchedGame
from tenk_env.vector.layout import (
    F_CURRENT,
    F_DL,
    F_FINAL,
    F_PHASE,
    F_RID,
    F_ROLLS,
    F_TRIGGER,
    F_TT,
    P_BUSTS,
    P_ONBOARD,
    P_SCORE,
    PH_DECIDE,
    POPCOUNT,
    table_arrays,
)

__all__ = [
    "EXACT_AGENTS",
    "MULTI_AGENTS",
    "check_exact_spec",
    "check_multi_spec",
    "exact_policy",
    "exact_eval",
    "best_response",
    "exact_eval_n",
    "best_response_n",
    "seat_ceiling",
    "BotPolicy",
    "BestResponseAgent",
    "EquilibriumAgent",
    "policy_key",
    "afterstate_policy",
    "exact_eval_beside_equilibrium",
]

#: what the exact evaluator can follow, for error messages
EXACT_AGENTS = (
    "optimal, maxscore, dicenow, breakeven, greedy[:N], hold[:N], br:BOT (the best response to BOT) and "
    "2-player afterstate agents (afterstate:PATH, zoo:NAME)"
)
_BOTS = {"maxscore", "dicenow", "breakeven", "greedy", "hold"}
_WHY_NOT = {
    "random": "it draws its moves at random",
    "ppo": "a network's moves are not followed exactly (measure it by regret: tenk analyze)",
    "zoo": "a PPO network's moves are not followed exactly (measure it by regret: tenk analyze)",
    "human": "it asks a person",
    "onnx": "a network's moves are not followed exactly (measure it by regret: tenk analyze)",
    "cmd": "its moves come from another process, which the evaluator cannot tabulate",
    "equilibrium": (
        "its moves read every player's score, and the evaluator tabulates agents that read their own "
        "and the leader's; at 2 players it plays as optimal does (tenk solve eval RULES BOT optimal); at "
        "3, seat one bot beside it (tenk solve eval RULES BOT equilibrium equilibrium), or measure any "
        "agent in matches (tenk ffa AGENT --opponents equilibrium equilibrium)"
    ),
}
#: what an agent the evaluator has no word on is told
_NOT_TABULATED = "the evaluator cannot tabulate its moves"


def check_exact_spec(spec) -> None:
    """Raise :class:`SolverError` unless the exact evaluator can follow agent ``spec``.
    Solves nothing: call it on every name before any solve starts."""
    if not isinstance(spec, str):
        raise SolverError(f"agent {spec!r}: the exact evaluator takes agent specs ({EXACT_AGENTS})")
    name, _, arg = spec.partition(":")
    if name == "br":
        if not arg:
            raise SolverError("agent 'br' needs the agent it answers: br:BOT, e.g. br:dicenow")
        if "," in arg:
            raise SolverError(
                f"agent {spec!r} answers {len(arg.split(','))} bots, for "
                f"{len(arg.split(',')) + 1}-player games; the 2-player exact evaluator follows "
                f"{EXACT_AGENTS}"
            )
        check_exact_spec(arg)
        return
    if name in ("afterstate", "zoo"):
        _afterstate(spec)
        return
    if name == "optimal" or name in _BOTS:
        try:
            make_agent(spec)  # the factory checks the parameter (hold:abc...)
        except AgentError as e:
            raise SolverError(str(e)) from None
        return
    if name in AGENTS:
        why = _WHY_NOT.get(name, _NOT_TABULATED)
        raise SolverError(
            f"agent {spec!r} cannot be evaluated exactly: {why}; the exact evaluator follows {EXACT_AGENTS}"
        )
    raise SolverError(
        f"unknown agent {name!r}{did_you_mean(name, sorted(_BOTS | {'optimal', 'br'}))}; "
        f"the exact evaluator follows {EXACT_AGENTS}"
    )


#: what the N-player exact solver follows (2 to 4 players)
MULTI_AGENTS = "maxscore, dicenow, breakeven, greedy[:N] and hold[:N]"


def check_multi_spec(spec) -> None:
    """Raise :class:`SolverError` unless the N-player exact solver can follow agent ``spec``
    (:data:`MULTI_AGENTS`). Solves nothing."""
    if not isinstance(spec, str):
        raise SolverError(f"agent {spec!r}: the N-player exact solver takes agent specs ({MULTI_AGENTS})")
    name, _, _ = spec.partition(":")
    if name in _BOTS:
        try:
            make_agent(spec)
        except AgentError as e:
            raise SolverError(str(e)) from None
        return
    if name == "optimal":
        why = "it is the 2-player game solution; with more players the most a seat can win is br:BOT1,BOT2"
    elif name == "br":
        why = "a best response is measured against the bots it answers (tenk solve best-response)"
    elif name in ("afterstate", "zoo"):
        why = "a learned agent's moves are followed exactly at 2 players only (measure it by a match)"
    elif name in AGENTS:
        why = _WHY_NOT.get(name, _NOT_TABULATED)
    else:
        raise SolverError(
            f"unknown agent {name!r}{did_you_mean(name, sorted(_BOTS))}; the N-player exact solver "
            f"follows {MULTI_AGENTS}"
        )
    raise SolverError(
        f"agent {spec!r} cannot be evaluated exactly with more than 2 players: {why}; "
        f"the N-player exact solver follows {MULTI_AGENTS}"
    )


def _bot_list(arg: str) -> list[str]:
    """The players ``br:BOT1,BOT2`` answers: bots the N-player solver follows, or
    ``equilibrium`` (a player of the symmetric equilibrium)."""
    bots = [b.strip() for b in arg.split(",")]
    if not all(bots):
        raise SolverError(f"agent 'br:{arg}': name every bot it answers, separated by commas: br:dicenow,maxscore")
    for b in bots:
        if b != "equilibrium":
            check_multi_spec(b)
    return bots


def exact_eval_n(
    rules: Ruleset | str,
    specs: list[str],
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> MultiEval | None:
    """Exact P(win) of N = 2 to 4 bots (:data:`MULTI_AGENTS`) sitting in this cyclic order, for
    every one of them moving first (:class:`~tenk_env.solve.multi.MultiEval`); cached on disk
    (``cached_only``: None unless cached)."""
    for sp in specs:
        check_multi_spec(sp)
    rules = load_ruleset(rules)
    check_multi_rules(rules, len(specs))
    res = evaluate_multi(
        rules,
        [BotPolicy(make_agent(sp), rules) for sp in specs],
        cache=cache,
        theta=theta,
        progress=progress,
        cached_only=cached_only,
    )
    if res is not None:
        res.names = list(specs)
    return res


def exact_eval_beside_equilibrium(
    rules: Ruleset | str,
    bot: str,
    n_players: int = 3,
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> SeatVsEquilibrium | None:
    """Exact P(win) of ``bot`` (:data:`MULTI_AGENTS`) from every seat of an ``n_players`` game
    (2 to 4) whose other seats play the symmetric equilibrium
    (:class:`~tenk_env.solve.eq_seat.SeatVsEquilibrium`); the equilibrium is solved first if it
    is not cached; cached on disk (``cached_only``: None unless cached)."""
    check_multi_spec(bot)
    rules = load_ruleset(rules)
    check_equilibrium_rules(rules, n_players)
    res = evaluate_beside_equilibrium(
        rules,
        BotPolicy(make_agent(bot), rules),
        n_players,
        cache=cache,
        theta=theta,
        progress=progress,
        cached_only=cached_only,
    )
    if res is not None:
        res.name = bot
    return res


def exact_br_beside_equilibrium(
    rules: Ruleset | str, others: list[str], *, cache: bool = True, progress=None, cached_only: bool = False
) -> SeatBestResponse | None:
    """The exact best response, reading every score, to ``others`` seated after it in this
    order: ``equilibrium`` (a player of the symmetric equilibrium, solved first if it is not
    cached) or a bot of :data:`MULTI_AGENTS`; 2 to 4 players in all. Its win probability seat
    by seat (:func:`tenk_env.solve.eq_seat.best_response_beside_equilibrium`); cached on disk."""
    rules = load_ruleset(rules)
    others = [o.strip() for o in others]
    for o in others:
        if o != "equilibrium":
            check_multi_spec(o)
    check_equilibrium_rules(rules, len(others) + 1)
    players = [None if o == "equilibrium" else BotPolicy(make_agent(o), rules) for o in others]
    br = best_response_beside_equilibrium(rules, players, cache=cache, progress=progress, cached_only=cached_only)
    if br is not None:
        br.name = "br:" + ",".join(others)
    return br


_BRN: OrderedDict = OrderedDict()


def best_response_n(
    rules: Ruleset | str,
    bots: list[str],
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> MultiBestResponse | None:
    """The exact best response to 1 to 3 bots seated after it in this order
    (:class:`~tenk_env.solve.multi.MultiBestResponse`: its win probability seat by seat, the
    solution ``br:BOT1,BOT2`` plays from). Solved once, then read from the disk cache
    (``cached_only``: None unless cached)."""
    bots = [b.strip() for b in bots]
    for b in bots:
        check_multi_spec(b)
    rules = load_ruleset(rules)
    check_multi_rules(rules, len(bots) + 1)
    mkey = (rules.hash, tuple(bots), theta, cache)
    if mkey in _BRN:
        _BRN.move_to_end(mkey)
        return _BRN[mkey]
    br = best_response_multi(
        rules,
        [BotPolicy(make_agent(b), rules) for b in bots],
        cache=cache,
        theta=theta,
        progress=progress,
        cached_only=cached_only,
    )
    if br is None:
        return None
    br.opponents = list(bots)
    _BRN[mkey] = br
    if len(_BRN) > 2:
        _BRN.popitem(last=False)
    return br


def seat_ceiling(
    rules: Ruleset | str, opponents: list[str], seated: list[str], *, compute: bool = False, progress=None
) -> tuple[MultiBestResponse | None, dict[str, float]]:
    """What exact play says about one seat of a free-for-all against ``opponents`` (seated
    after it in this order): the best response there (None, unless ``compute``, if it is not
    cached) and the exact rotation-mean win share of each agent of ``seated`` the solver
    follows, in that seat. :class:`SolverError` if the N-player solver does not cover the table."""
    rules = load_ruleset(rules)
    for o in opponents:
        check_multi_spec(o)
    check_multi_rules(rules, len(opponents) + 1)
    br = best_response_n(rules, opponents, cached_only=not compute, progress=progress)
    if br is None:
        return None, {}
    shares: dict[str, float] = {}
    for x in seated:
        try:
            check_multi_spec(x)
        except SolverError:
            continue
        e = exact_eval_n(rules, [x, *opponents], cached_only=not compute)
        if e is not None:
            shares[x] = float(e.mean[0])
    return br, shares


def _afterstate(spec: str) -> AfterstateAgent:
    """The afterstate agent of ``spec`` if the evaluator can follow it, else :class:`SolverError`."""
    try:
        agent = make_agent(spec)
    except AgentError as e:
        raise SolverError(str(e)) from None
    if not isinstance(agent, AfterstateAgent):
        raise SolverError(
            f"agent {spec!r} cannot be evaluated exactly: {_WHY_NOT['zoo']}; the exact evaluator follows {EXACT_AGENTS}"
        )
    if agent.meta["n_players"] != 2:
        raise SolverError(
            f"agent {spec!r} plays {agent.meta['n_players']}-player games; the exact evaluator follows 2-player games"
        )
    if agent.net.version < 2:
        raise SolverError(
            f"agent {spec!r} reads afterstate features v{agent.net.version}, whose bust count makes its "
            "moves depend on the game's history; retrain it with this tenk (v2) to evaluate it exactly, "
            "or measure it by regret (tenk analyze)"
        )
    return agent


def _afterstate_code() -> str:
    # the agent's values come from its module, the last turns from the evaluator's optimal policy
    return closure_hash(AfterstateAgent.__module__, f"{__name__}:afterstate_policy")


def _afterstate_key(agent: AfterstateAgent) -> str:
    h = hashlib.sha256(json.dumps(agent.meta, sort_keys=True).encode())
    for k, v in sorted(agent.net.weights().items()):
        h.update(k.encode())
        h.update(np.ascontiguousarray(v).tobytes())
    return f"afterstate_{h.hexdigest()[:16]}-{_afterstate_code()}"


def afterstate_policy(agent: AfterstateAgent, sol: GameSolution) -> SelfValued:
    """A features-v2, 2-player afterstate agent as the evaluator's self-valued policy: its net's
    values where its turns hand the game on below the target, and the exact last turn (the
    one ``optimal`` has) where they reach it."""
    try:
        agent.check(sol.rules, 2)
    except AgentError as e:
        raise SolverError(str(e)) from None
    return SelfValued(
        agent.name, sol, agent.value_grid(sol.unit, sol.rules), optimal_policy(sol).RF, _afterstate_key(agent)
    )


# ---------------------------------------------------------------------- bots, asked move by move
def _bot_code() -> str:
    # one code part for every bot: BotPolicy reads them all, and the heuristic bots' batched forms
    # are one compiled kernel that branches on the bot (maxscore's sits in the same module)
    return closure_hash(f"{__name__}:BotPolicy")


class BotPolicy(Tabulated):
    """A deterministic zoo bot, asked its moves through its batched form."""

    #: exact types: a subclass may read the scores in ways the keys below do not know
    KINDS = (HoldAgent, GreedyAgent, DiceNowAgent, BreakEvenAgent, MaxScoreAgent)

    def __init__(self, agent, rules: Ruleset):
        if type(agent) not in self.KINDS:
            raise SolverError(f"agent {getattr(agent, 'name', agent)!r}: the exact evaluator follows {EXACT_AGENTS}")
        self.agent = agent
        self.name = agent.name
        self.rules = rules
        self.batched = batched_agent(agent)
        self._engine: BatchedGame | None = None
        self._rng = np.random.default_rng(0)

    def cache_key(self) -> str:
        return f"{self.name.replace(':', '_')}-{_bot_code()}"

    def prepare(self, spec: Spec) -> None:
        self.unit = spec.unit
        self.N = spec.n_dice
        ta = table_arrays(self.rules)
        # one roll stands for its class: the bots' moves depend on the roll only through the
        # keeps it offers (tests/solve/test_exact.py asks every roll of every class)
        self.rep_rid = np.array([ta.roll_index[rolls[0]] for rolls in class_rolls(spec)], np.int64)
        self.keep_pts = ta.keep_pts.astype(np.int64)
        self.ctx = context(get_tables(self.rules))

    def situation_key(self, a: int, b: int, fa: int, fb: int, final: bool) -> Hashable:
        r, u = self.rules, self.unit
        # fa, fb: statuses, the on-board flag plus twice the busts in a row
        entering = bool(r.entry_threshold) and not fa & 1
        # finishing (end: immediate) and the exact-finish rules compare own score + total with the target
        to_go = r.target - a * u if (r.end == "immediate" or r.exact_finish != "off") else None
        kind = type(self.agent)
        if kind is MaxScoreAgent:
            # its table by on-board flag and, under a bust penalty, busts in a row; the legality
            # net reads the score under exact finish only
            return ("maxscore", fa, final, r.target - a * u if r.exact_finish != "off" else None)
        if kind in (HoldAgent, GreedyAgent):
            return (kind.__name__, entering, final, to_go)
        s = Situation(0, self.N, a * u, b * u, entering, False, bool(final))
        lead = (b - a) if final else None
        if kind is DiceNowAgent:
            bars = tuple(dicenow_bar(self.ctx, s, k) for k in range(1, self.N))
            return ("dicenow", entering, final, to_go, lead, bars)
        return ("breakeven", entering, final, to_go, lead, breakeven_weight(self.ctx, s))

    def _game(self, m: int) -> BatchedGame:
        if self._engine is None or self._engine.batch_size < m:
            self._engine = BatchedGame(self.rules, 2, max(m, 4096), seed=0, auto_reset=False)
            self._out = np.zeros(self._engine.batch_size, np.int64)
        return self._engine

    def decide(self, sits, k, r, n, T, c):
        m = len(k)
        e = self._game(m)
        rid = self.rep_rid[c]
        _pose(e._S, e._PS, sits, k, r, n, T * self.unit, self.unit, rid)
        self.batched.act(e, np.arange(m, dtype=np.int64), self._rng, self._out)
        act = self._out[:m]
        mask = act & 63
        return self.keep_pts[rid, mask], POPCOUNT[mask].astype(np.int64), (act & 64) != 0


@njit(cache=True)
def _pose(S, PS, sits, k, r, n, total, unit, rid):
    """Set games 0..len(k)-1 of a batched engine to the positions asked (statuses: on-board
    flag plus twice the busts in a row). No game reaches them by play: the state arrays are
    written directly. Seat 0 is to move; in a final turn seat 1 triggered the final round."""
    for i in range(len(k)):
        s = k[i]
        final = sits[s, 4]
        S[F_PHASE, i] = PH_DECIDE
        S[F_CURRENT, i] = 0
        S[F_TT, i] = total
        S[F_DL, i] = n[i]
        S[F_ROLLS, i] = r[i] + 1
        S[F_RID, i] = rid[i]
        S[F_FINAL, i] = final
        S[F_TRIGGER, i] = 1 if final else -1
        PS[P_SCORE, i, 0] = sits[s, 0] * unit
        PS[P_SCORE, i, 1] = sits[s, 1] * unit
        PS[P_ONBOARD, i, 0] = sits[s, 2] & 1
        PS[P_ONBOARD, i, 1] = sits[s, 3] & 1
        PS[P_BUSTS, i, 0] = sits[s, 2] >> 1
        PS[P_BUSTS, i, 1] = sits[s, 3] >> 1


# ---------------------------------------------------------------------- specs -> policies
def policy_key(spec: str) -> str:
    """The content key of an exact policy, without solving anything."""
    name, _, arg = spec.partition(":")
    if name == "br":
        return br_cache_key(policy_key(arg))
    if name == "optimal":
        return optimal_key()
    if name in ("afterstate", "zoo"):
        return _afterstate_key(_afterstate(spec))
    return f"{make_agent(spec).name.replace(':', '_')}-{_bot_code()}"


_BR: OrderedDict = OrderedDict()


def best_response(rules: Ruleset | str, bot: str, *, cache: bool = True, theta: float = THETA) -> BestResponse:
    """The exact best response to ``bot`` (any spec :func:`check_exact_spec` accepts) under
    ``rules``: its win rate seat by seat (``p_first``, ``p_second``, ``p``), the solution
    ``br:BOT`` plays from. Solved once, then read from the disk cache."""
    check_exact_spec(bot)
    rules = load_ruleset(rules)
    check_exact_rules(rules)
    mkey = (rules.hash, bot, theta, cache)
    if mkey in _BR:
        _BR.move_to_end(mkey)
        return _BR[mkey]
    sol = solve_game(rules)
    br = solve_best_response(rules, exact_policy(rules, bot, sol=sol, theta=theta), sol=sol, cache=cache, theta=theta)
    _BR[mkey] = br
    if len(_BR) > 8:
        _BR.popitem(last=False)
    return br


def exact_policy(rules: Ruleset | str, spec: str, *, sol=None, theta: float = THETA) -> ExactPolicy:
    """The exact evaluator's view of agent ``spec`` (solving what it needs: the game, a best response)."""
    check_exact_spec(spec)
    rules = load_ruleset(rules)
    name, _, arg = spec.partition(":")
    if name == "optimal":
        return optimal_policy(sol or solve_game(rules))
    if name == "br":
        return best_response(rules, arg, theta=theta).policy()
    if name in ("afterstate", "zoo"):
        return afterstate_policy(_afterstate(spec), sol or solve_game(rules))
    return BotPolicy(make_agent(spec), rules)


def exact_eval(rules: Ruleset | str, a: str, b: str, *, cache: bool = True, theta: float = THETA) -> EvalResult:
    """Exact P(A beats B) under ``rules``, seat by seat (``p_a_first``, ``p_a_second``,
    balanced ``p_a``), for agent specs A and B (see :data:`EXACT_AGENTS`). Names and the
    ruleset are checked before anything is solved; results are cached on disk."""
    check_exact_spec(a)
    check_exact_spec(b)
    rules = load_ruleset(rules)
    check_exact_rules(rules)
    if cache:
        got = cached_eval(eval_cache_key(rules, policy_key(a), policy_key(b), theta), a, b)
        if got is not None:
            return got
    sol = solve_game(rules)
    pa = exact_policy(rules, a, sol=sol, theta=theta)
    pb = exact_policy(rules, b, sol=sol, theta=theta)
    res = evaluate_policies(rules, pa, pb, sol=sol, cache=cache, theta=theta)
    res.a, res.b = a, b
    return res


# ---------------------------------------------------------------------- the br:BOT agent
class _TableAgent:
    """An agent that plays from a solver's within-turn tables (kept in an LRU cache), choosing
    with :func:`tenk_env.solve.policy.pick`, the solver kernels' tie-break, so that the exact
    figures describe exactly the moves it plays."""

    CACHE_SIZE = 16_384

    def __init__(self, name: str, cache_size: int = CACHE_SIZE):
        self.name = name
        self._cache: OrderedDict = OrderedDict()
        self._cache_size = cache_size

    def _values(self, key, make):
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = make()
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return got

    def _seat_tables(self, game: Game, sol):
        """The mover's tables from an N-player solution (``turn_values(scores)``,
        ``final_values(scores, trigger, bar)``, scores in units read from the mover)."""
        N, cur, u = game.n_players, game.current, sol.unit
        # its own score first, then the players after it in turn order
        sc = tuple(game.scores[(cur + k) % N] // u for k in range(N))
        if game.final_round and game.trigger != cur:
            t = (game.trigger - cur) % N
            bar = max(game.scores) // u
            return self._values((game.rules.hash, "final", sc, t, bar), lambda: sol.final_values(sc, t, bar))
        return self._values((game.rules.hash, sc), lambda: sol.turn_values(sc))

    def _rows(self, game: Game, u: int, tables) -> list[tuple[Keep, float | None, float | None]]:
        """Every legal move's value from the tables (:func:`tenk_env.solve.policy.move_values`
        rows); rolling on past the table's cap is valued as banking, which the solver proved
        best there, so such a roll's value is an upper bound."""
        V, bv, Tcap, beta, forced = tables
        n_bv = bv.shape[0] - 1
        return move_values(game, u, V, Tcap, lambda T: float(bv[min(T, n_bv)]), beta, game.max_rolls, True, forced)

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        raise AgentError(f"agent {self.name!r} does not play piggyback rulesets (its solver does not model them)")

    def __repr__(self) -> str:
        return f"<agent {self.name}>"


class BestResponseAgent(_TableAgent):
    """``br:BOT``: maximises the probability of beating BOT (2 players), from the exact best
    response (:func:`best_response`; solved on first use, then read from the disk cache);
    ``br:BOT1,BOT2[,BOT3]``: the same against 2 or 3 bots seated after it in that order
    (:func:`best_response_n`), for 3- and 4-player games; ``equilibrium`` among them (2 to 4
    players in all) for a player of the symmetric equilibrium (:func:`exact_br_beside_equilibrium`:
    ``br:equilibrium,equilibrium`` is the most one seat can win against equilibrium play).
    Against anything but those players in those seats it still plays the same moves: it is
    the ceiling against them, not a general player."""

    def __init__(self, target: str, cache_size: int = _TableAgent.CACHE_SIZE):
        try:
            self.bots = _bot_list(target) if "," in target else None
            if self.bots is None:
                check_exact_spec(target)
        except SolverError as e:
            raise AgentError(f"agent 'br:{target}': {e}") from None
        super().__init__(f"br:{target}", cache_size)
        self.target = target
        self._br: dict = {}

    @property
    def n_players(self) -> int:
        return 2 if self.bots is None else len(self.bots) + 1

    def check(self, rules: Ruleset, n_players: int) -> None:
        try:
            if n_players != self.n_players:
                raise SolverError(
                    f"it answers {self.n_players - 1} bot(s), so it plays {self.n_players}-player "
                    f"games (this one has {n_players}); use br:" + ",".join(["BOT"] * (n_players - 1))
                )
            if self.bots is None:
                check_exact_rules(rules, n_players)
            elif "equilibrium" in self.bots:
                check_equilibrium_rules(rules, n_players)
            else:
                check_multi_rules(rules, n_players)
        except SolverError as e:
            raise AgentError(f"agent {self.name!r} cannot play: {e}") from None

    def prepare(self, rules: Ruleset, n_players: int) -> None:
        """Solve (or read from the disk cache) the best response it plays from, which its first
        move would otherwise do: a server runs this aside, in its solver's queue."""
        self.check(rules, n_players)
        self._solution(rules)

    def _solution(self, rules: Ruleset):
        br = self._br.get(rules.hash)
        if br is None:
            if self.bots is None:
                br = best_response(rules, self.target)
            elif "equilibrium" in self.bots:
                br = exact_br_beside_equilibrium(rules, self.bots)
            else:
                br = best_response_n(rules, self.bots)
            self._br[rules.hash] = br
        return br

    def values(self, game: Game) -> list[tuple[Keep, float | None, float | None]]:
        """The value (its win probability against the bots it answers) of every legal move at
        ``game``'s current decision, as ``(keep, roll on, end the turn)`` rows: the moves it
        chooses from (:meth:`decide` plays the first best under the kernels' tie-break)."""
        if game.n_players != self.n_players:
            raise AgentError(f"agent {self.name!r} plays {self.n_players}-player games (this one has {game.n_players})")
        rules = game.rules
        br = self._solution(rules)
        if self.bots is not None:
            return self._rows(game, br.unit, self._seat_tables(game, br))
        # the state whose tables decide the turn, as the optimal agent reads it
        key = state_key(br.sol, game)
        if key[1] == "final":
            tables = self._values(key, lambda: br.final_values(*key[2:]))
        else:
            tables = self._values(key, lambda: br.turn_values(*key[1:]))
        return self._rows(game, br.unit, tables)

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        return choose(self.values(game))


class EquilibriumAgent(_TableAgent):
    """``equilibrium``: the symmetric equilibrium's strategy at 2 to 4 players, every player
    maximising its own win probability (:func:`tenk_env.solve.equilibrium.solve_equilibrium`;
    solved on first use for the game's ruleset and player count, then read from the disk
    cache: on 2 cores, 1.5 minutes for classic to 3,000 at 3 players, 6 to 5,000, 51 to
    10,000). A table of it plays the equilibrium; any agent in one of the seats is measured
    against it. At 2 players it plays as ``optimal`` does."""

    def __init__(self, cache_size: int = _TableAgent.CACHE_SIZE):
        super().__init__("equilibrium", cache_size)
        self._eq: dict = {}

    def check(self, rules: Ruleset, n_players: int) -> None:
        try:
            check_equilibrium_rules(rules, n_players)
        except SolverError as e:
            raise AgentError(f"agent {self.name!r} cannot play: {e}") from None

    def prepare(self, rules: Ruleset, n_players: int):
        """Solve (or read from the disk cache) the equilibrium it plays from, which its first
        move would otherwise do: a server runs this aside, in its solver's queue."""
        key = (rules.hash, n_players)
        eq = self._eq.get(key)
        if eq is None:
            try:
                eq = self._eq[key] = solve_equilibrium(rules, n_players)
            except SolverError as e:
                raise AgentError(f"agent {self.name!r} cannot play: {e}") from None
        return eq

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        eq = self.prepare(game.rules, game.n_players)
        return choose(self._rows(game, eq.unit, self._seat_tables(game, eq)))


def make_equilibrium(arg: str | None) -> EquilibriumAgent:
    if arg:
        raise AgentError(
            f"agent 'equilibrium' takes no argument (got 'equilibrium:{arg}'): the game's ruleset and "
            "player count decide what it solves"
        )
    return EquilibriumAgent()


def make_br(arg: str | None) -> BestResponseAgent:
    if not arg:
        raise AgentError("agent 'br' needs the agent it answers: br:BOT, e.g. br:dicenow")
    return BestResponseAgent(arg)
