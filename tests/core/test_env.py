"""The single-agent Gymnasium env and the shared observation/action encoding."""

import re

import gymnasium as gym
import numpy as np
import pytest

import tenk_env  # noqa: F401  (registers TenThousand-v0)
from tenk_env.env import TenThousandEnv
from tenk_env.game import Game, IllegalMoveError, Phase
from tenk_env.obs import (
    OBS_VERSION,
    PIGGYBACK_FRESH,
    PIGGYBACK_TAKE,
    apply_action,
    encode,
    illegal_reason,
    keep_action,
    legal_mask,
    obs_high,
    obs_labels,
    obs_size,
)
from tenk_env.policies.base import AgentError
from tenk_env.rules import PRESETS, RulesetError
from tenk_env.vector.engine import game_state


class Banker:
    """Deterministic test opponent: the best keep (most dice on ties), banking when allowed."""

    name = "banker"

    def check(self, rules, n_players):
        pass

    def decide(self, game, rng):
        return max(game.legal_moves(), key=lambda m: (m[0].points, m[0].n, m[1]))

    def piggyback(self, game, rng):
        return False


def nonzero(obs, n_players=2):
    """The observation as {label: value} for its non-zero entries."""
    labels = obs_labels(n_players)
    return {labels[i]: pytest.approx(float(obs[i])) for i in np.flatnonzero(obs)}


def legal_set(mask):
    return set(np.flatnonzero(mask).tolist())


def engine_legal(game):
    """The legal actions according to the turn machine itself."""
    if game.phase == Phase.PIGGYBACK:
        return {PIGGYBACK_TAKE, PIGGYBACK_FRESH}
    return {keep_action(k, e) for k, e in game.legal_moves()}


# ---------------------------------------------------------------- API checkers


# the raw env has no spec, so check_env cannot rebuild it per render mode; the registered one can
@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")
def test_gymnasium_check_env_passes_on_the_raw_and_registered_env(capsys):
    from gymnasium.utils.env_checker import check_env

    check_env(TenThousandEnv())
    env = gym.make("TenThousand-v0")
    check_env(env.unwrapped)  # via the spec: also builds every declared render mode


def test_sb3_check_env_passes_in_non_strict_mode():
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make("TenThousand-v0", strict=False), warn=True)
    check_env(TenThousandEnv(rules=PRESETS["classic"].replace(piggyback=True), n_players=3), warn=True)


def test_registered_env_takes_the_documented_arguments():
    env = gym.make(
        "TenThousand-v0", rules="inform_five_dice", n_players=4, opponents=["random"], seat=2, reward="shaped"
    )
    obs, info = env.reset(seed=3)
    assert env.unwrapped.rules.name == "inform_five_dice"
    assert env.observation_space.shape == (obs_size(4),) == (76,) and obs.dtype == np.float32
    assert env.action_space.n == 128 and info["seat"] == 2
    assert env.metadata["obs_version"] == OBS_VERSION
    assert env.get_wrapper_attr("action_masks")().dtype == bool
    assert TenThousandEnv(rules=PRESETS["classic"].replace(piggyback=True)).action_space.n == 130


# ---------------------------------------------------------------- exact values, hand-fed dice


def test_hand_fed_game_gives_known_observations_masks_and_info():
    env = TenThousandEnv(seat=0, opponents=[Banker()])
    dice = [
        1,
        1,
        1,
        5,
        2,
        3,  # learner: sorted 1 1 1 2 3 5
        5,
        5,
        5,
        5,
        2,
        3,  # opponent keeps four 5s (1,000) and banks
        2,
        3,
        4,
        6,
        2,
        3,  # learner busts
        1,
        2,
        3,
        4,
        5,
        6,  # opponent: straight 1,500, banks (2,500)
        5,
        2,
        3,
        4,
        6,
        6,
    ]  # learner: sorted 2 3 4 5 6 6
    obs, info = env.reset(seed=0, options={"dice": dice})
    assert nonzero(obs) == {
        "die0_is1": 1,
        "die1_is1": 1,
        "die2_is1": 1,
        "die3_is2": 1,
        "die4_is3": 1,
        "die5_is5": 1,
        "count1": 0.5,
        "count2": 1 / 6,
        "count3": 1 / 6,
        "count5": 1 / 6,
        "dice_left": 1,
        "rolls": 0.1,
        "rolls_left": 1,
        "phase_decide": 1,
        "p0_to_move": 1,
    }
    # keeps of 1 1 1 2 3 5: 1, 11, 111, 5, 15, 115, 1115; off the board only 111 and 1115 may bank
    assert legal_set(info["action_mask"]) == {1, 3, 7, 32, 33, 35, 39, 7 | 64, 39 | 64}
    assert info["action_mask"].dtype == np.int8 and info["seat"] == 0

    obs, reward, terminated, truncated, info = env.step(7 | 64)  # keep 1 1 1 and bank 1,000
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert (info["banked"], info["busts"], info["illegal_action"]) == (1000, 1, False)
    assert env.game.scores == [1000, 2500]
    assert nonzero(obs) == {
        "die0_is2": 1,
        "die1_is3": 1,
        "die2_is4": 1,
        "die3_is5": 1,
        "die4_is6": 1,
        "die5_is6": 1,
        "count2": 1 / 6,
        "count3": 1 / 6,
        "count4": 1 / 6,
        "count5": 1 / 6,
        "count6": 2 / 6,
        "dice_left": 1,
        "rolls": 0.1,
        "rolls_left": 1,
        "score_if_banked": 0.1,
        "phase_decide": 1,
        "p0_score": 0.1,
        "p0_on_board": 1,
        "p0_to_move": 1,
        "p1_score": 0.25,
        "p1_on_board": 1,
    }
    assert legal_set(info["action_mask"]) == {8, 8 | 64}  # keep the 5; on the board, 50 may bank
    assert legal_set(env.action_masks()) == {8, 72} and env.action_masks().dtype == bool


@pytest.mark.parametrize(
    "reward,opp_roll,tie,expected,winners",
    [
        ("win", [2, 3, 4, 6, 2, 3], "first_to_target", 1.0, [0]),  # opponent busts: learner wins
        ("win", [1, 1, 1, 1, 2, 3], "first_to_target", -1.0, [1]),  # four 1s, 2,000: learner loses
        ("win", [1, 1, 1, 2, 3, 4], "shared", 0.25, [0, 1]),  # 1,000 each, shared: tie_reward
        ("win", [1, 1, 1, 2, 3, 4], "first_to_target", 1.0, [0]),  # tie broken: learner got there first
        ("shaped", [2, 3, 4, 6, 2, 3], "first_to_target", 2.0, [0]),  # 1,000 / 1,000 banked + 1 win
        ("shaped", [1, 1, 1, 1, 2, 3], "first_to_target", 0.0, [1]),  # 1 banked - 1 loss
    ],
)
def test_terminal_rewards(reward, opp_roll, tie, expected, winners):
    rules = PRESETS["classic"].replace(target=1000, tie=tie)
    env = TenThousandEnv(rules=rules, seat=0, opponents=Banker(), reward=reward, tie_reward=0.25)
    env.reset(seed=0, options={"dice": [1, 1, 1, 2, 3, 4] + opp_roll})
    obs, r, terminated, truncated, info = env.step(7 | 64)  # bank 1,000: the final round starts
    assert (r, terminated, truncated) == (pytest.approx(expected), True, False)
    assert info["winners"] == winners and info["won"] == (0 in winners)
    assert info["winner"] == (winners[0] if len(winners) == 1 else -1)
    assert info["final_scores"][0] == 1000 and info["episode_banked"] == 1000
    assert obs[obs_labels(2).index("game_over")] == 1 and not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="episode is over: call reset"):
        env.step(0)


def test_piggyback_observation_and_actions():
    rules = PRESETS["classic"].replace(piggyback=True)
    env = TenThousandEnv(rules=rules, seat=1, opponents=[Banker()])
    # seat 0 keeps 1 1 1 and banks 1,000, leaving 3 dice; the learner takes them over
    obs, info = env.reset(seed=0, options={"dice": [1, 1, 1, 2, 3, 4, 1, 5, 2]})
    assert legal_set(info["action_mask"]) == {PIGGYBACK_TAKE, PIGGYBACK_FRESH}
    assert nonzero(obs) == {
        "dice_left": 1,
        "rolls_left": 1,
        "phase_piggyback": 1,
        "piggy_dice": 0.5,
        "piggy_total": 0.1,
        "piggy_total_fine": 1000 / 3000,
        "p0_to_move": 1,
        "p1_score": 0.1,
        "p1_on_board": 1,
    }
    obs, r, term, _, info = env.step(PIGGYBACK_TAKE)
    g = env.game
    assert (g.turn_total, g.dice, g.dice_left) == (1000, (1, 2, 5), 3)
    # taken-over total 1,000 counts toward the entry threshold: every keep may bank
    assert legal_set(info["action_mask"]) == {1, 4, 5, 65, 68, 69}
    labels = obs_labels(2)
    assert obs[labels.index("turn_total")] == pytest.approx(0.1)
    assert obs[labels.index("dice_left")] == pytest.approx(0.5)


# ---------------------------------------------------------------- illegal actions


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_strict_illegal_actions_raise_naming_the_action_and_change_nothing(backend):
    env = TenThousandEnv(seat=0, opponents=[Banker()], strict=True, backend=backend)
    env.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4, 1, 2, 3, 4, 6]})  # sorted 1 1 2 3 4 5
    before = (game_state(env.game), env.np_random.bit_generator.state, env._mask.copy())
    cases = [
        (
            2,
            re.escape(
                "action 2 is illegal: keep-mask 0b000010 keeps [1] from roll [1, 1, 2, 3, 4, 5], but only "
                "the canonical mask of each set of dice is legal: use action 1 (mask 0b000001"
            ),
        ),
        (4, r"keep-mask 0b000100 keeps \[2\] from roll \[1, 1, 2, 3, 4, 5\]: the 2 in \[2\] does not score"),
        (0, "keep-mask 0 sets no die aside"),
        (
            1 | 64,
            "action 65 .*is illegal: cannot bank after keeping \\[1\\]: not on the board yet and the turn "
            "total 100 is below the entry threshold 500",
        ),
    ]
    for action, message in cases:
        with pytest.raises(IllegalMoveError, match=message):
            env.step(action)
        assert (game_state(env.game), env.np_random.bit_generator.state) == before[:2]
        assert (env._mask == before[2]).all()
    for bad in (128, -1, 2.5, "x"):
        with pytest.raises(ValueError, match="action space|not an integer"):
            env.step(bad)
    obs, r, term, _, info = env.step(1)  # the legal move still works afterwards
    g = env.game
    assert (g.turn_total, g.dice, info["illegal_action"]) == (100, (1, 2, 3, 4, 6), False)


def test_strict_error_for_piggyback_actions_out_of_phase():
    env = TenThousandEnv(rules=PRESETS["classic"].replace(piggyback=True), seat=0, strict=True)
    env.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4]})
    with pytest.raises(
        IllegalMoveError,
        match="action 128 is illegal: piggyback actions .* only at the start "
        "of a turn after a bank; the game is in phase DECIDE",
    ):
        env.step(PIGGYBACK_TAKE)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_non_strict_illegal_action_is_a_documented_no_op(backend):
    env = TenThousandEnv(seat=0, opponents=[Banker()], illegal_reward=-0.5, backend=backend)
    obs0, info0 = env.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4]})
    events, state = (len(env.game.events), game_state(env.game)), env.np_random.bit_generator.state
    obs, r, term, trunc, info = env.step(2)  # non-canonical name of "keep one 1"
    assert (r, term, trunc, info["illegal_action"]) == (-0.5, False, False, True)
    assert (obs == obs0).all() and (info["action_mask"] == info0["action_mask"]).all()
    assert obs is not obs0 and info["action_mask"] is not info0["action_mask"]
    assert ((len(env.game.events), game_state(env.game)), env.np_random.bit_generator.state) == (events, state)


def test_illegal_reason_matches_the_mask_everywhere():
    rng = np.random.default_rng(5)
    checked = 0
    g = Game(PRESETS["bc_society"], 3, record=False)  # mandatory hot dice, one more roll
    while checked < 600:
        if g.phase == Phase.OVER:
            g = Game(PRESETS["zilch"].replace(piggyback=True), 2, record=False)
        if g.phase in (Phase.ROLL, Phase.ORDER):
            g.roll(rng.integers(1, 7, size=g.dice_to_roll))
            continue
        m = legal_mask(g)
        for a in range(len(m)):
            assert (illegal_reason(g, a) is None) == bool(m[a]), (a, g)
        apply_action(g, int(rng.choice(np.flatnonzero(m))))
        checked += 1


# ---------------------------------------------------------------- masks vs the engine

MASK_RULESETS = {
    "classic": PRESETS["classic"],
    "bc_society": PRESETS["bc_society"],  # mandatory hot dice, one more roll, highest die starts
    "inform_five_dice": PRESETS["inform_five_dice"],  # five dice, three rolls per turn
    "zilch": PRESETS["zilch"],  # minimum bank, zilch pay-out, bust penalty
    "farkle_official": PRESETS["farkle_official"],
    "wikihow": PRESETS["wikihow"],  # six 1s win at once, no entry threshold
    "piggyback": PRESETS["scribd_farkle"].replace(piggyback=True, bust_penalty=1000),
    "piggyback_five": PRESETS["inform_five_dice"].replace(piggyback=True, end="final_round"),
    "exact_finish": PRESETS["classic"].replace(exact_finish="to_lowest", target=2000, min_bank=300),
    "busche_neller_2017": PRESETS["busche_neller_2017"],
}


@pytest.mark.parametrize("name", MASK_RULESETS)
def test_masks_agree_with_the_engine_on_every_decision_of_long_random_games(name):
    """Every decision of every seat (so the masks see both sides of the entry threshold,
    roll limits, piggyback offers), 10,000 decisions per ruleset, 2 to 4 players."""
    rules = MASK_RULESETS[name]
    rng = np.random.default_rng(17)
    decisions = games = 0
    while decisions < 10_000:
        g = Game(rules, 2 + games % 3, record=False)
        games += 1
        while g.phase != Phase.OVER and decisions < 10_000:
            if g.phase in (Phase.ROLL, Phase.ORDER):
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            m = legal_mask(g)
            assert legal_set(m) == engine_legal(g), (name, g)
            assert not legal_mask(g, (g.current + 1) % g.n_players).any()
            obs = encode(g, g.current)
            assert obs.shape == (obs_size(g.n_players),) and obs.dtype == np.float32
            assert obs.min() >= 0 and (obs <= obs_high(g.n_players)).all()
            apply_action(g, int(rng.choice(np.flatnonzero(m))))
            decisions += 1


@pytest.mark.parametrize("name", ["classic", "zilch", "piggyback", "bc_society"])
def test_env_masks_agree_with_the_engine_on_every_step(name):
    env = TenThousandEnv(rules=MASK_RULESETS[name], n_players=3, seat="random")
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=3)
    for _ in range(1500):
        assert legal_set(info["action_mask"]) == engine_legal(env.game)
        assert env.observation_space.contains(obs)
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            obs, info = env.reset()


# ---------------------------------------------------------------- reproducibility


def rollout(env, seed, steps=600):
    rng = np.random.default_rng(seed)
    out = []
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        out.append((obs.tobytes(), r, term, info["banked"], info["busts"], tuple(env.game.scores)))
        if term:
            out.append(("end", tuple(info["final_scores"]), tuple(info["winners"])))
            obs, info = env.reset()
    return out


def test_seeded_rollouts_are_identical_twice_opponents_included():
    def make():
        return TenThousandEnv(n_players=3, seat="random", opponents=["random", "random"])

    a, b = rollout(make(), 11), rollout(make(), 11)
    assert a == b and sum(1 for x in a if x[0] == "end") >= 3
    assert rollout(make(), 12) != a
    env = make()  # a seeded reset restarts the dice stream, whatever came before
    rollout(env, 99, steps=50)
    assert rollout(env, 11) == a


def test_random_seat_covers_every_seat_and_opponents_keep_their_turn_order():
    env = TenThousandEnv(n_players=3, seat="random", opponents=[Banker(), "random"])
    seen = set()
    env.reset(seed=0)
    for _ in range(30):
        _, info = env.reset()
        seen.add(info["seat"])
        s = info["seat"]
        assert isinstance(env._policies[(s + 1) % 3], Banker) and env._policies[s] is None
    assert seen == {0, 1, 2}
    _, info = env.reset(options={"seat": 2})
    assert info["seat"] == 2 and env.seat == 2


def test_encode_is_a_pure_function_of_game_and_seat():
    g = Game("classic", 3, record=False)
    g.roll([1, 5, 2, 3, 4, 6])
    g.act([1], end_turn=False)
    g.roll([1, 1, 1, 2, 3])
    g.scores[:] = [300, 1200, 25000]
    a, b = encode(g, 1), encode(g, 1)
    assert (a == b).all() and a is not b
    labels = obs_labels(3)
    view = {k: float(v) for k, v in zip(labels, a)}
    # seat 1 sees itself as p0, seat 2 as p1 and seat 0 (to move) as p2; scores clip at 2
    assert (view["p0_score"], view["p1_score"], view["p2_score"]) == pytest.approx((0.12, 2.0, 0.03))
    assert (view["p0_to_move"], view["p2_to_move"]) == (0.0, 1.0)
    assert view["turn_total"] == pytest.approx(0.01) and view["dice_left"] == pytest.approx(5 / 6)
    assert view["score_if_banked"] == pytest.approx(0.04)  # the mover's score + turn total
    assert not legal_mask(g, 1).any() and legal_mask(g, 0).any()


# ---------------------------------------------------------------- arguments and rendering


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        ({"rules": "clasic"}, RulesetError, "unknown ruleset preset 'clasic' \\(did you mean 'classic'\\?\\)"),
        ({"n_players": 1}, ValueError, "n_players = 1: TenThousandEnv plays 2 to 8 players"),
        ({"n_players": 9}, ValueError, "n_players = 9"),
        ({"n_players": "2"}, ValueError, "n_players = '2'"),
        ({"seat": 2}, ValueError, "seat = 2: give a seat 0 to 1 \\(n_players = 2\\) or 'random'"),
        ({"seat": "first"}, ValueError, "seat = 'first'"),
        (
            {"opponents": ["randm"]},
            AgentError,
            "opponents\\[0\\]: unknown agent 'randm' \\(did you mean 'random'\\?\\)",
        ),
        ({"opponents": ["random", "random"]}, ValueError, "opponents: 2 given for 1 other seat"),
        ({"opponents": [42]}, AgentError, "opponents\\[0\\]: agent spec 42"),
        ({"reward": "points"}, ValueError, "reward = 'points': choose 'win' .* or 'shaped'"),
        ({"render_mode": "rgb_array"}, ValueError, "render_mode = 'rgb_array': choose None, 'ansi' or 'human'"),
    ],
)
def test_bad_arguments_name_the_problem(kwargs, error, message):
    with pytest.raises(error, match=message):
        TenThousandEnv(**kwargs)


def test_bad_reset_options_and_step_before_reset():
    env = TenThousandEnv()
    with pytest.raises(RuntimeError, match="call reset\\(\\) before step"):
        env.step(1)
    with pytest.raises(ValueError, match="reset options \\['seed'\\] are not known"):
        env.reset(options={"seed": 3})
    with pytest.raises(ValueError, match="options\\['seat'\\] = 5"):
        env.reset(options={"seat": 5})
    with pytest.raises(ValueError, match="every face must be 1 to 6"):
        env.reset(options={"dice": [0, 7]})


def test_render_ansi_returns_the_log_of_the_last_step(capsys):
    env = TenThousandEnv(seat=0, opponents=[Banker()], render_mode="ansi")
    env.reset(seed=0, options={"dice": [1, 1, 1, 5, 2, 3, 2, 3, 4, 6, 2, 3, 5, 2, 3, 4, 6, 6]})
    assert env.render().splitlines()[-2:] == [
        "P1 (you) rolls 1 1 1 2 3 5",
        "your roll: 1 1 1 2 3 5 | turn total 0 | legal actions: 1, 3, 7, 32, 33, 35, 39, 71, 103",
    ]
    env.step(71)
    assert env.render().splitlines() == [
        "P1 (you) keeps 1 1 1 for 1,000 (turn 1,000) and banks",
        "P1 (you) banks 1,000: score 1,000",
        "-- turn 2: P2 (scores 1,000, 0)",
        "P2 rolls 2 2 3 3 4 6",
        "P2 busts, losing 0",
        "-- turn 3: P1 (you) (scores 1,000, 0)",
        "P1 (you) rolls 2 3 4 5 6 6",
        "your roll: 2 3 4 5 6 6 | turn total 0 | legal actions: 8, 72",
    ]
    human = TenThousandEnv(seat=0, render_mode="human")
    human.reset(seed=0)
    assert "P1 (you) rolls" in capsys.readouterr().out
    with pytest.warns(UserWarning, match="render\\(\\) called without a render_mode"):
        assert TenThousandEnv().render() is None


def test_maskable_ppo_trains_2000_steps_on_the_default_env():
    import torch
    from sb3_contrib import MaskablePPO

    env = gym.make("TenThousand-v0")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny networks: extra threads only fight other processes for the cores
    try:
        model.learn(total_timesteps=2000)
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps >= 2000
    obs, info = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
    assert info["action_mask"][int(action)] == 1
