"""The single-game envs on both engines: the Python turn machine (the reference) and the
compiled one (``backend="numba"``) play identical games from the same seed and actions."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tenk_env.aec import TenThousandAEC
from tenk_env.env import TenThousandEnv
from tenk_env.game import IllegalMoveError
from tenk_env.rules import PRESETS
from tenk_env.vector.engine import game_state


def transcript(backend: str, steps: int, seed: int, **kwargs) -> list:
    """Masked random play: every observation, mask, reward, flag and info, reset ones included."""
    env = TenThousandEnv(backend=backend, **kwargs)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [("reset", obs.tobytes(), sorted(info.items(), key=str).__repr__())]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(len(legal))]) if rng.random() > 0.02 else 2  # now and then an illegal one
        obs, r, term, trunc, info = env.step(a)
        out.append((obs.tobytes(), r, term, trunc, sorted(info.items(), key=str).__repr__(), game_state(env.game)))
        if term:
            obs, info = env.reset()
            out.append(("reset", obs.tobytes(), sorted(info.items(), key=str).__repr__(), game_state(env.game)))
    return out


def same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"step {i}: python {x!r}\n numba {y!r}"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_both_engines_play_identical_games_on_every_preset(preset):
    # 250 steps cross several 1,024-face blocks of the dice stream; shaped rewards show every
    # score change; the opponents mix compiled bots (played inside the compiled step) with
    # one asked from Python (random, which draws from the env's generator on both engines)
    n = 3 if preset != "house_1000" else 2
    opponents = ["dicenow", "random"] if n == 3 else ["breakeven"]
    kw = dict(rules=preset, n_players=n, opponents=opponents, reward="shaped")
    same(transcript("python", 250, 7, **kw), transcript("numba", 250, 7, **kw))


@pytest.mark.parametrize("opponents", [["maxscore"], ["hold:300"], ["greedy"], ["random"]])
def test_both_engines_agree_for_each_kind_of_opponent(opponents):
    kw = dict(rules="classic", n_players=2, opponents=opponents, seat=1)
    same(transcript("python", 300, 3, **kw), transcript("numba", 300, 3, **kw))


def test_four_players_and_piggyback_agree():
    rules = PRESETS["classic"].replace(piggyback=True, target=3000)
    kw = dict(rules=rules, n_players=4, opponents=["dicenow", "maxscore", "hold:250"])
    same(transcript("python", 400, 11, **kw), transcript("numba", 400, 11, **kw))


def test_scripted_dice_are_dealt_the_same_on_both():
    # the script's last two faces are too few for the 5-die roll that follows: both drop them
    for backend in ("python", "numba"):
        env = TenThousandEnv(seat=0, opponents=["dicenow"], backend=backend)
        obs, info = env.reset(seed=1, options={"dice": [1, 2, 3, 4, 6, 6, 5, 5]})
        assert env.game.dice == (1, 2, 3, 4, 6, 6)
        env.step(1)  # keep the 1, roll five
        assert env.game.dice != (5, 5) and len(env.game.dice) == 5
    kw = dict(opponents=["dicenow"], seat=0)
    a, b = TenThousandEnv(backend="python", **kw), TenThousandEnv(backend="numba", **kw)
    for env in (a, b):
        env.reset(seed=1, options={"dice": [1, 2, 3, 4, 6, 6, 5, 5]})
        env.step(1)
    assert game_state(a.game) == game_state(b.game)


def test_strict_errors_are_the_same_on_both():
    msgs = []
    for backend in ("python", "numba"):
        env = TenThousandEnv(seat=0, strict=True, backend=backend)
        env.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4]})
        with pytest.raises(IllegalMoveError) as e:
            env.step(2)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "canonical mask" in msgs[0]


def test_backend_argument_is_checked():
    with pytest.raises(ValueError, match="backend = 'fast': choose 'auto', 'numba'"):
        TenThousandEnv(backend="fast")
    with pytest.raises(
        ValueError, match="render_mode = 'ansi' draws the Python engine's game log: use backend='python'"
    ):
        TenThousandEnv(backend="numba", render_mode="ansi")
    with pytest.raises(ValueError, match="backend = 'gpu'"):
        TenThousandAEC(backend="gpu")
    assert TenThousandEnv().backend == "numba"
    assert TenThousandEnv(render_mode="ansi").backend == "python"  # auto: rendering needs the game log
    assert TenThousandAEC(render_mode="ansi").backend == "python"


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_gymnasium_and_sb3_checkers_pass_on_both(backend):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    check_env(TenThousandEnv(backend=backend), skip_render_check=True)
    sb3_check_env(
        TenThousandEnv(rules=PRESETS["classic"].replace(piggyback=True), n_players=3, backend=backend), warn=True
    )


def aec_transcript(backend: str, n: int, rules, seed: int, decisions: int) -> list:
    aec = TenThousandAEC(rules=rules, n_players=n, backend=backend)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(decisions):
        obs, r, term, trunc, info = aec.last()
        views = [
            (o["observation"].tobytes(), o["action_mask"].tobytes()) for o in map(aec.observe, aec.possible_agents)
        ]
        out.append((aec.agent_selection, r, term, repr(info), views, dict(aec._cumulative_rewards)))
        if term or trunc:
            aec.step(None)
            if not aec.agents:
                aec.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(int(legal[rng.integers(len(legal))]))
    return out


@pytest.mark.parametrize("preset,n", [("classic", 2), ("zilch", 4), ("farkle_official", 3), ("walnut", 2)])
def test_aec_engines_play_identical_games(preset, n):
    same(aec_transcript("python", n, preset, 5, 700), aec_transcript("numba", n, preset, 5, 700))


@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_pettingzoo_checkers_pass_on_both(backend):
    api_test(TenThousandAEC(n_players=3, rules="bc_society", backend=backend), num_cycles=200)
    seed_test(lambda: TenThousandAEC(n_players=3, backend=backend), num_cycles=200)


def test_aec_illegal_action_changes_nothing_on_numba():
    aec = TenThousandAEC(backend="numba")
    aec.reset(seed=0, options={"dice": [1, 1, 5, 2, 3, 4]})
    before = game_state(aec.game)
    with pytest.raises(IllegalMoveError, match="action 2 is illegal: keep-mask 0b000010"):
        aec.step(2)
    assert game_state(aec.game) == before


def test_a_ppo_opponent_agrees_on_both():
    # a PPO agent has a compiled form without a driver: asked from Python between compiled calls
    from tenk_env.policies.ppo import untrained_ppo

    ppo = untrained_ppo("classic", 3, seed=1)
    kw = dict(rules="classic", n_players=3, opponents=[ppo, "dicenow"], reward="shaped")
    same(transcript("python", 200, 2, **kw), transcript("numba", 200, 2, **kw))
