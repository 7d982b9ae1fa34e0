"""Exact evaluation of afterstate agents (features v2): the evaluator's view of the agent (its
net's values plus exact last turns) is the agent's own plan, state by state, and its exact win
rate is what the agent wins in play."""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.evaluation.match import play_match
from tenk_env.game import Game
from tenk_env.policies.afterstate import AfterstateAgent, checkpoint_meta, n_features, plan_turn, save_checkpoint
from tenk_env.policies.exact import afterstate_policy, exact_eval, policy_key
from tenk_env.rules import PRESETS
from tenk_env.rules_obs import RULES_OBS_VERSION
from tenk_env.solve import SolverError, solve_game
from tenk_env.solve.best_response import BestResponse

C = PRESETS["classic"]
#: a final round, an entry threshold, turns of at most two rolls (as in tests/solve/test_exact.py)
FR2 = PRESETS["busche_neller_2017"].replace(target=1000, end="final_round", max_rolls=2, entry_threshold=300)
#: unlimited rolls, flat multiples, an entry threshold, shared ties
FIN = C.replace(
    target=500,
    entry_threshold=150,
    max_rolls=3,
    multiples="flat",
    flat_multiples=(500, 750, 1000),
    tie="shared",
    name="fin500",
)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def weights(n_players: int, seed: int, hidden: int = 16, rules_obs: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    F = n_features(n_players, rules_obs)
    return {
        "w0": rng.normal(size=(F, hidden)),
        "b0": rng.normal(size=hidden),
        "w1": rng.normal(size=(hidden, n_players)),
        "b1": rng.normal(size=n_players),
    }


def agent(rules, seed: int, learn: bool = True) -> AfterstateAgent:
    return AfterstateAgent.from_weights(
        weights(2, seed), checkpoint_meta(rules, 2, hidden=[16], opponents_learn=learn), "afterstate:test"
    )


@pytest.mark.parametrize("rules", [FR2, FIN], ids=["fr2", "fin500"])
@pytest.mark.parametrize("learn", [True, False], ids=["selfplay", "vs_bots"])
def test_the_evaluators_turn_values_are_the_agents_plan(rules, learn):
    """At every turn-start state the evaluator's backward induction on the value grid gives
    the agent's plan, entry by entry, so it follows the agent's moves."""
    for seed in range(2):
        check_follows(rules, agent(rules, seed, learn), learn)


@pytest.mark.parametrize("rules", [FR2, FIN], ids=["fr2", "fin500"])
def test_the_evaluator_follows_an_agent_that_reads_the_rules(rules):
    """A net reading the rules observation (one net for every ruleset) is followed on each
    ruleset it is asked about, with that ruleset's observation."""
    ag = AfterstateAgent.from_weights(
        weights(2, 3, rules_obs=RULES_OBS_VERSION),
        checkpoint_meta(None, 2, hidden=[16], opponents_learn=True, trained_on="test"),
        "afterstate:any",
    )
    check_follows(rules, ag, True)


def check_follows(rules, ag, learn):
    """The evaluator's turn values from the value grid of ``ag`` equal its own plans."""
    sol = solve_game(rules, with_fair_komi=False)
    u, tu = sol.unit, sol.target_units
    pol = afterstate_policy(ag, sol)
    view = BestResponse(rules, sol, "test", None, None, pol.W, pol.RF)
    checked = 0
    step = max(1, tu // 10)
    for a in range(0, tu, step):
        for b in range(0, tu, step):
            for fa, fb in ((1, 1), (0, 1), (1, 0), (0, 0)):
                if (not fa and a) or (not fb and b):
                    continue
                g = Game(rules, 2, record=False)
                g.scores, g.on_board = [a * u, b * u], [bool(fa), bool(fb)]
                plan = plan_turn(g, ag.net, (True, learn))
                V, bv, Tcap, beta, _ = view.turn_values(a, b, fa, fb)
                T = min(Tcap, plan.Tcap)
                np.testing.assert_allclose(V[:, :, : T + 1], plan.V[:, :, : T + 1], rtol=0, atol=1e-12)
                assert beta == pytest.approx(plan.bust, abs=1e-12)
                checked += 1
    assert checked > 40


def test_exact_win_rate_is_what_it_wins_in_play(tmp_path):
    path = save_checkpoint(
        tmp_path / "a.npz", weights(2, 1), checkpoint_meta(FR2, 2, hidden=[16], opponents_learn=True)
    )
    spec = f"afterstate:{path}"
    e = exact_eval(FR2, spec, "dicenow")
    m = play_match(FR2, spec, "dicenow", 1500, seed=5)
    half = 1.5 * (m.ci_high - m.ci_low) / 2  # a 99.7% interval: the test must not be a coin toss
    assert abs(m.win_rate_a - e.p_a) < half, (e, m.win_rate_a, m.ci_low, m.ci_high)
    # against optimal it cannot win more than the game value allows
    opt = exact_eval(FR2, "optimal", spec)
    assert 0.0 < 1.0 - opt.p_a <= 0.5 + 1e-12


def test_keys_follow_the_weights(tmp_path):
    meta = checkpoint_meta(FR2, 2, hidden=[16], opponents_learn=True)
    p1 = save_checkpoint(tmp_path / "a.npz", weights(2, 1), meta)
    p2 = save_checkpoint(tmp_path / "b.npz", weights(2, 2), meta)
    p3 = save_checkpoint(tmp_path / "c.npz", weights(2, 1), meta)
    k1, k2, k3 = (policy_key(f"afterstate:{p}") for p in (p1, p2, p3))
    assert k1 != k2 and k1 == k3


def test_what_it_cannot_follow_is_named(tmp_path):
    v1 = dict(checkpoint_meta(FR2, 2, hidden=[16], opponents_learn=True), features_version=1)
    p = save_checkpoint(tmp_path / "v1.npz", weights(2, 1), v1)
    with pytest.raises(SolverError, match="v1.*history.*retrain"):
        exact_eval(FR2, f"afterstate:{p}", "dicenow")
    p3 = save_checkpoint(tmp_path / "p3.npz", weights(3, 1), checkpoint_meta(FR2, 3, hidden=[16], opponents_learn=True))
    with pytest.raises(SolverError, match="3-player"):
        exact_eval(FR2, f"afterstate:{p3}", "dicenow")
    other = save_checkpoint(
        tmp_path / "o.npz", weights(2, 1), checkpoint_meta(FIN, 2, hidden=[16], opponents_learn=True)
    )
    with pytest.raises(SolverError, match="fin500"):
        exact_eval(FR2, f"afterstate:{other}", "dicenow")
    with pytest.raises(SolverError, match="does not exist"):
        exact_eval(FR2, f"afterstate:{tmp_path / 'nothing.npz'}", "dicenow")
    with pytest.raises(SolverError, match="PPO"):
        exact_eval(C, "zoo:classic_ppo_demo", "dicenow")
