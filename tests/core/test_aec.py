"""The PettingZoo AEC env: API and seed checkers, masks, rewards, illegal actions."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tenk_env.aec import TenThousandAEC
from tenk_env.aec import env as make_aec
from tenk_env.game import IllegalMoveError, Phase
from tenk_env.obs import PIGGYBACK_FRESH, PIGGYBACK_TAKE, encode, keep_action, legal_mask, obs_labels, obs_size
from tenk_env.rules import PRESETS

PIGGY = PRESETS["classic"].replace(piggyback=True)


# Dict observations carrying the action mask are PettingZoo's own convention for its classic
# games, which api_test exempts from these two warnings by name only.
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"n_players": 3, "rules": "bc_society"},
        {"n_players": 8},
        {"n_players": 2, "rules": PIGGY},
        {"n_players": 4, "rules": "inform_five_dice"},
    ],
)
def test_pettingzoo_api_test_passes(kwargs):
    api_test(make_aec(**kwargs), num_cycles=200)
    api_test(TenThousandAEC(**kwargs), num_cycles=200)


@pytest.mark.parametrize("kwargs", [{}, {"n_players": 3, "rules": PIGGY}, {"n_players": 5, "rules": "zilch"}])
def test_pettingzoo_seed_test_passes(kwargs):
    seed_test(lambda: make_aec(**kwargs), num_cycles=300)


def play(aec, seed, decisions=600, check=None):
    """Masked random self-play over as many games as it takes to make ``decisions``
    decisions; returns the transcript (agent, observation bytes, reward, terminated)."""
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    out = []
    made = 0
    while made < decisions:
        for agent in aec.agent_iter():
            obs, reward, term, trunc, info = aec.last()
            out.append((agent, obs["observation"].tobytes(), reward, term))
            if term or trunc:
                aec.step(None)
                continue
            if check:
                check(aec, agent, obs)
            aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            made += 1
        aec.reset()
    return out


@pytest.mark.parametrize(
    "rules,n",
    [
        ("classic", 2),
        (PIGGY, 3),
        ("inform_five_dice", 4),
        ("zilch", 2),
        (PRESETS["bc_society"].replace(piggyback=True), 3),
    ],
)
def test_every_agent_decision_has_the_engine_mask_and_its_own_observation(rules, n):
    seen = {"decisions": 0}

    def check(aec, agent, obs):
        g = aec.game
        seat = int(agent.split("_")[1])
        assert seat == g.current
        if g.phase == Phase.PIGGYBACK:
            want = {PIGGYBACK_TAKE, PIGGYBACK_FRESH}
        else:
            want = {keep_action(k, e) for k, e in g.legal_moves()}
        assert set(np.flatnonzero(obs["action_mask"]).tolist()) == want
        assert (obs["observation"] == encode(g, seat)).all()
        other = aec.possible_agents[(seat + 1) % n]
        assert not aec.observe(other)["action_mask"].any()
        seen["decisions"] += 1

    play(TenThousandAEC(rules=rules, n_players=n), 0, decisions=5000, check=check)
    assert seen["decisions"] >= 5000


def test_seeded_self_play_is_identical_twice():
    a = play(TenThousandAEC(n_players=3), 7)
    assert a == play(TenThousandAEC(n_players=3), 7)
    assert a != play(TenThousandAEC(n_players=3), 8)


def test_terminal_rewards_three_players_with_hand_fed_dice():
    aec = TenThousandAEC(rules=PRESETS["classic"].replace(target=1000), n_players=3)
    # player_0 banks 1,000 (final round); player_1 busts; player_2 keeps four 1s (2,000) and banks
    aec.reset(seed=0, options={"dice": [1, 1, 1, 2, 3, 4, 2, 2, 3, 3, 4, 6, 1, 1, 1, 1, 2, 3]})
    assert aec.agent_selection == "player_0"
    aec.step(7 | 64)
    assert aec.agent_selection == "player_2"
    obs, reward, term, trunc, info = aec.last()
    assert set(np.flatnonzero(obs["action_mask"]).tolist()) == {1, 3, 7, 15, 7 | 64, 15 | 64}
    aec.step(15 | 64)
    assert aec.terminations == {a: True for a in aec.possible_agents}
    assert {a: aec._cumulative_rewards[a] for a in aec.agents} == {"player_0": -1.0, "player_1": -1.0, "player_2": 1.0}
    assert aec.infos["player_2"] == {"winners": [2], "won": True, "final_scores": [1000, 0, 2000], "turns": 3}
    obs, reward, term, trunc, info = aec.last()
    assert (reward, term, trunc) == (1.0, True, False)
    assert obs["observation"][obs_labels(3).index("game_over")] == 1
    for _ in range(3):
        aec.step(None)
    assert aec.agents == []


def test_shared_win_gets_the_tie_reward():
    aec = TenThousandAEC(rules=PRESETS["classic"].replace(target=1000, tie="shared"), tie_reward=0.5)
    aec.reset(seed=0, options={"dice": [1, 1, 1, 2, 3, 4, 1, 1, 1, 2, 3, 4]})
    aec.step(7 | 64)
    aec.step(7 | 64)
    assert aec.rewards == {"player_0": 0.5, "player_1": 0.5}


def test_illegal_action_raises_naming_it_and_changes_nothing():
    aec = TenThousandAEC()
    aec.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4]})
    g = aec.game
    before = (dict(vars(g)), list(g.scores), aec.np_random.bit_generator.state, aec.agent_selection)
    with pytest.raises(IllegalMoveError, match="action 65 .*cannot bank after keeping \\[1\\]: not on the board"):
        aec.step(1 | 64)
    with pytest.raises(IllegalMoveError, match="action 2 is illegal: keep-mask 0b000010 .* use action 1"):
        aec.step(2)
    with pytest.raises(ValueError, match="player_0 is to move: give an action"):
        aec.step(None)
    assert (dict(vars(g)), list(g.scores), aec.np_random.bit_generator.state, aec.agent_selection) == before


def test_bad_arguments_and_rendering(capsys):
    with pytest.raises(ValueError, match="n_players = 9: TenThousandAEC plays 2 to 8 players"):
        TenThousandAEC(n_players=9)
    with pytest.raises(ValueError, match="render_mode = 'rgb_array'"):
        TenThousandAEC(render_mode="rgb_array")
    aec = TenThousandAEC(render_mode="ansi")
    aec.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4, 2, 3, 4, 6, 2]})
    assert aec.render().splitlines()[-1] == "player_0 rolls 1 1 2 3 4 5"
    aec.step(1)
    assert aec.render().splitlines()[:4] == [
        "player_0 keeps 1 for 100 (turn 100) and rolls on",
        "player_0 rolls 2 2 3 4 6",
        "player_0 busts, losing 100",
        "-- turn 2: player_1 (scores 0, 0)",
    ]
    human = TenThousandAEC(render_mode="human")
    human.reset(seed=0)
    assert "player_0 rolls" in capsys.readouterr().out
    assert aec.observation_space("player_1")["observation"].shape == (obs_size(2),)
    assert aec.metadata["obs_version"] == 1
    assert not legal_mask(aec.game, 1 - aec.game.current).any()
