"""Afterstate agents: the turn ends the planner values agree with the Game, a plan
is exact where the game ends within the turn, and the trainer trains, checkpoints, resumes,
loads as an agent everywhere and refuses what it cannot play."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_match, play_table
from tenk_env.game import Game, Phase
from tenk_env.io import file_sha256
from tenk_env.policies.afterstate import (
    AfterstateAgent,
    AfterstateError,
    ValueNet,
    _clone,
    _ends,
    _frame,
    _plan,
    _position,
    _spec,
    check_rules,
    checkpoint_meta,
    features_of,
    make_afterstate,
    n_features,
    plan_turn,
    read_checkpoint,
    win_shares,
)
from tenk_env.policies.base import agent_sha256
from tenk_env.rules import PRESETS
from tenk_env.solve import solve_game
from tenk_env.solve.regret import TurnTables
from tenk_env.training.afterstate import load_afterstate_config, resume_afterstate, train_afterstate
from tenk_env.training.config import ConfigError
from tenk_env.training.rundir import RunError

C = PRESETS["classic"]
FIN = C.replace(
    target=500,
    entry_threshold=150,
    max_rolls=3,
    multiples="flat",
    flat_multiples=(500, 750, 1000),
    tie="shared",
    name="fin500",
)


def random_net(n_players: int, seed: int = 0, hidden: int = 16) -> ValueNet:
    rng = np.random.default_rng(seed)
    F = n_features(n_players)
    return ValueNet(
        {
            "w0": rng.normal(size=(F, hidden)),
            "b0": rng.normal(size=hidden),
            "w1": rng.normal(size=(hidden, n_players)),
            "b1": rng.normal(size=n_players),
        }
    )


def turn_starts(rules, n, seed, games=3, max_turns=60):
    """Turn-start copies of games played by a hold-at-350-ish random policy."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        g = Game(rules, n, record=False)
        while not g.over and g.turn < max_turns:
            if g.phase == Phase.ROLL and g.turn_total == 0 and g.rolls == 0:
                out.append(_clone(g))
            if g.dice_to_roll:
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            moves = g.legal_moves()
            banks = [m for m in moves if m[1]]
            g.act(*(banks[0] if banks and g.turn_total >= 300 else moves[int(rng.integers(len(moves)))]))
    return out


def last_turn_exact(c):
    """The exact value of a game's last turn, planned at this very position (no cache)."""
    frame = _frame(c)
    ends = _ends(c, np.arange(frame[-1]), frame[0].unit, (True,) * c.n_players, 2)
    assert (ends.row < 0).all()
    return _plan(c, frame, ends.out, True).value


def brute_end(game, T, unit, learner, how, version):
    """What Game does when the turn ends one way, with nothing shared with _ends (version 2:
    a last turn is planned where it stands)."""
    p = game.current
    c = _clone(game)
    if how == "bank":
        c.turn_total = T * unit
        c._close_turn()
    elif how == "bust":
        c._emit = lambda *a, **k: None
        c.busts_in_row[p] += 1
        r = c.rules
        if r.bust_penalty and c.busts_in_row[p] >= r.bust_penalty_after:
            c.scores[p] -= min(r.bust_penalty, c.scores[p])
            c.busts_in_row[p] = 0
        c._end_turn(bust=True)
    else:
        c._end_turn(bust=False)
    if c.over:
        return "over", win_shares(c, p)
    k = (p - c.current) % c.n_players
    if version >= 2 and c.n_players == 2 and c.final_round and c.final_turns_left == 1:
        return "last", last_turn_exact(c)[(k + np.arange(c.n_players)) % c.n_players]
    return "live", (features_of(c.rules, *_position(c, learner, version))[0], k)


CASES = [
    ("classic", 2),
    ("classic", 3),
    ("zilch", 2),
    ("bc_society", 3),
    ("inform_five_dice", 4),
    ("wikihow", 2),
    ("farkle_official", 2),
]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("preset,n", CASES)
def test_turn_ends_agree_with_the_game(preset, n, version):
    rules = PRESETS[preset]
    unit = _spec(rules).unit
    learner = tuple([True] + [False] * (n - 1))
    checked = lasts = 0
    for g in turn_starts(rules, n, seed=len(preset) + n)[::3]:
        bankable = [T for T in range(0, 260) if g._bankable(T * unit)]
        Ts = np.arange(260)
        e = _ends(g, Ts, unit, learner, version)
        for T in bankable[::7] + bankable[-3:]:
            kind, want = brute_end(g, T, unit, learner, "bank", version)
            if kind == "over":
                assert e.row[T] == -1 and np.array_equal(e.out[T], want), (g, T)
            elif kind == "last":  # the cached value of an equivalent last turn, to float precision
                assert e.row[T] == -1
                np.testing.assert_allclose(e.out[T], want, rtol=0, atol=1e-12)
                lasts += 1
            else:
                assert e.row[T] >= 0 and e.shift[T] == want[1]
                np.testing.assert_array_equal(e.X[e.row[T]], want[0])
            checked += 1
        for idx, how in ((len(Ts), "bust"), (len(Ts) + 1, "forfeit")):
            kind, want = brute_end(g, 0, unit, learner, how, version)
            if kind == "over":
                assert e.row[idx] == -1 and np.array_equal(e.out[idx], want)
            elif kind == "last":
                assert e.row[idx] == -1
                np.testing.assert_allclose(e.out[idx], want, rtol=0, atol=1e-12)
            else:
                np.testing.assert_array_equal(e.X[e.row[idx]], want[0])
                assert e.shift[idx] == want[1]
    assert checked > 20
    if version >= 2 and rules.end != "immediate" and n == 2:
        assert lasts > 0  # a 2-player bank into the target hands on the game's last turn


def test_a_bank_into_the_target_under_a_minimum_bank_wins_at_once():
    """An immediate end with a 300 minimum bank: 2,900 against 2,550 to 3,000, every total of
    300 or more ends the game in the mover's favour, and the totals below it are forfeited.
    (A plan once valued all of them as the forfeit, the first of their range, and rolled on.)"""
    rules = C.replace(target=3000, end="immediate", min_bank=300, name="immediate-300")
    g = Game(rules, 2, record=False)
    g.scores, g.on_board = [2900, 2550], [True, True]
    unit = _spec(rules).unit
    Ts = np.arange(40)
    e = _ends(g, Ts, unit, (True, True), 2)
    for T in Ts:
        kind, want = brute_end(g, int(T), unit, (True, True), "bank", 2)
        if kind == "over":
            assert e.row[T] == -1 and np.array_equal(e.out[T], want), T
        else:
            assert e.row[T] >= 0 and np.array_equal(e.X[e.row[T]], want[0]), T
    assert [bool(e.row[T] == -1) for T in (5, 6, 7)] == [False, True, True]
    assert np.array_equal(e.out[6], [1.0, 0.0])


def test_final_round_ends_are_exact_and_the_last_turn_plan_is_the_solvers():
    """In a 2-player final round every bank ends the game, so the plan needs no net: its value
    must be the game solver's final-turn chance (to float precision), whatever the net."""
    sol = solve_game(FIN, with_fair_komi=False)
    unit = sol.unit
    for lead, on in ((50, True), (300, True), (450, False), (0, True)):
        g = Game(FIN, 2, record=False)
        g.scores = [500 + lead, 350 if on else 0]
        g.on_board = [True, on]
        g.final_round, g.trigger, g.final_turns_left, g.reached, g.current = True, 0, 1, [0], 1
        d = (g.scores[0] - g.scores[1]) // unit
        tt = TurnTables(sol, (FIN.hash, "final", d, int(on)))
        for seed in range(2):
            plan = plan_turn(g, random_net(2, seed), (True, True))
            assert plan.value[0] == pytest.approx(tt.V[0, FIN.num_dice, 0], abs=1e-12)
            assert plan.value.sum() == pytest.approx(1.0)


def test_plan_values_sum_to_one_with_more_players_and_the_agent_plays():
    for preset, n in (("classic", 3), ("inform_five_dice", 4), ("wikihow", 3)):
        rules = PRESETS[preset]
        net = random_net(n, 3)
        for g in turn_starts(rules, n, seed=5, games=1)[::5][:4]:
            v = plan_turn(g, net, (True,) * n).value
            assert v.min() >= 0 and v.sum() == pytest.approx(1.0, abs=1e-9), (preset, v)
    agent = AfterstateAgent(
        random_net(2, 1), checkpoint_meta(C, 2, hidden=[16], opponents_learn=True), "afterstate:test"
    )
    r = play_match("classic", agent, "dicenow", 4, seed=0, backend="scalar")
    assert r.games == 4 and r.wins_a + r.wins_b + r.ties == 4


def test_rulesets_it_cannot_plan_are_refused():
    with pytest.raises(AfterstateError, match="piggyback"):
        check_rules(C.replace(piggyback=True, name="pig"))
    with pytest.raises(AfterstateError, match="exact_finish"):
        check_rules(C.replace(exact_finish="forfeit", name="ex"))
    with pytest.raises(AfterstateError, match="four_twos_lose_all"):
        check_rules(C.replace(four_twos_lose_all=True, name="ftl"))


TINY = {
    "algo": "afterstate",
    "rules": "classic",
    "n_players": 2,
    "total_turns": 300,
    "train_every": 64,
    "max_game_turns": 60,
    "grad_steps": 4,
    "hidden": [16],
    "checkpoint_every": 150,
    "eval": {"every": 200, "games": 4, "opponents": ["hold:300"], "regret_games": 0},
}


def tiny_config(tmp_path, name="tiny", **over):
    data = {**TINY, "runs_dir": str(tmp_path / "runs"), "name": name, **over}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_trains_checkpoints_resumes_and_loads_everywhere(tmp_path, capsys):
    path = tiny_config(tmp_path, opponents={"self": 1, "hold:300": 1})
    assert main(["train", "--config", str(path), "--set", "total_turns=150"]) == 0
    run = tmp_path / "runs" / "tiny"
    for f in ("config.yaml", "run.yaml", "eval.csv", "last.npz", "best.npz", "state.pt"):
        assert (run / f).is_file(), f
    assert list((run / "tb").iterdir())
    w1, meta = read_checkpoint(run / "last.npz")
    assert meta["ruleset_hash"] == C.hash and meta["n_players"] == 2 and meta["turns"] >= 150
    assert meta["opponents_learn"] is False
    first = meta["turns"]
    # resume with a larger budget: the turn count continues, the weights move on
    assert main(["train", "--resume", str(run), "--set", "total_turns=300"]) == 0
    w2, meta2 = read_checkpoint(run / "last.npz")
    assert meta2["turns"] >= 300 > first and not np.array_equal(w1["w0"], w2["w0"])
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("turns,opponent") and len(rows) >= 3
    # an agent spec for matches, tables, tournaments and tenk evaluate
    spec = f"afterstate:{run / 'best.npz'}"
    r = play_match("classic", spec, "hold:300", 4, seed=1, backend="scalar")
    assert r.games == 4
    capsys.readouterr()
    assert main(["evaluate", spec, "--opponents", "hold:300", "--games", "4", "--regret-games", "0"]) == 0
    assert "hold:300" in capsys.readouterr().out
    # another ruleset or player count is refused, naming both
    agent = make_afterstate(str(run / "best.npz"))
    with pytest.raises(AfterstateError, match="trained for ruleset 'classic'.*zilch"):
        agent.check(PRESETS["zilch"], 2)
    with pytest.raises(AfterstateError, match="2 players.*3 players"):
        play_table("classic", [spec, "dicenow", "dicenow"], 3, seed=0, backend="scalar")
    # tournaments and analyses key its games by the checkpoint's bytes, as a ppo: agent's
    assert agent_sha256(spec) == file_sha256(run / "best.npz")
    # a run trained with other features cannot go on with these: refused, nothing touched
    import torch

    state = torch.load(run / "state.pt", weights_only=False)
    state["meta"]["features_version"] = 1
    torch.save(state, run / "state.pt")
    before = (run / "last.npz").read_bytes()
    with pytest.raises(RunError, match="features v1.*--force"):
        resume_afterstate(run, ["total_turns=400"], log=lambda m: None)
    assert (run / "last.npz").read_bytes() == before


def test_same_seed_same_run(tmp_path):
    a = train_afterstate(load_afterstate_config(tiny_config(tmp_path, "a", total_turns=120)), log=lambda s: None)
    b = train_afterstate(load_afterstate_config(tiny_config(tmp_path, "b", total_turns=120)), log=lambda s: None)
    wa, _ = read_checkpoint(a.run_dir / "last.npz")
    wb, _ = read_checkpoint(b.run_dir / "last.npz")
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)


@pytest.mark.parametrize("other_seats", ["plan", "net"])
def test_three_players_train(tmp_path, other_seats):
    res = train_afterstate(
        load_afterstate_config(
            tiny_config(
                tmp_path,
                "p3",
                n_players=3,
                total_turns=80,
                other_seats=other_seats,
                eval={"every": 0, "games": 3, "opponents": ["dicenow"]},
            )
        ),
        log=lambda s: None,
    )
    assert res.turns >= 80 and len(res.final) == 1 and res.final[0]["games"] == 3
    _, meta = read_checkpoint(res.run_dir / "last.npz")
    assert meta["n_players"] == 3


@pytest.mark.parametrize(
    "over, message",
    [
        (
            {"buffer": 1e12},
            "buffer = 1,000,000,000,000: the replay buffer (1,000,000,000,000 targets of 76 bytes, twice "
            "while it is saved) would take 152.0 TB of memory, over the limit of 4.0 GB; lower it, e.g. "
            "buffer=100000",
        ),
        (
            {"hidden": [100000, 100000]},
            "hidden = [100000, 100000]: the value net (10,002,100,002 parameters) would take "
            "320.1 GB of memory, over the limit of 4.0 GB; lower it, e.g. hidden=[64, 64]",
        ),
        (
            {"eval": {**TINY["eval"], "regret_games": 1e12}},
            "eval.regret_games = 1,000,000,000,000: give at most 1,000,000 games per evaluation",
        ),
        (
            {"eval": {**TINY["eval"], "games": 1e12}},
            "eval.games = 1,000,000,000,000: give at most 1,000,000 games per evaluation",
        ),
    ],
)
def test_sizes_are_bounded_before_any_work(tmp_path, over, message):
    path = tiny_config(tmp_path, **over)
    with pytest.raises(ConfigError) as e:
        load_afterstate_config(path)
    assert str(e.value) == f"config {str(path)!r}: {message}"
    assert not (tmp_path / "runs").exists()


def test_bad_input_is_refused_clearly(tmp_path):
    with pytest.raises(ConfigError, match="unknown config key hiden.*hidden"):
        load_afterstate_config(tiny_config(tmp_path, hiden=[3]))
    with pytest.raises(ConfigError, match="piggyback"):
        load_afterstate_config(tiny_config(tmp_path, rules={"base": "classic", "piggyback": True}))
    with pytest.raises(ConfigError, match="explore"):
        load_afterstate_config(tiny_config(tmp_path, explore=1.5))
    with pytest.raises(AfterstateError, match="does not exist"):
        make_afterstate(str(tmp_path / "nope.npz"))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(AfterstateError, match="not an afterstate checkpoint"):
        make_afterstate(str(bad))
    # a run directory that holds a run is not overwritten
    path = tiny_config(
        tmp_path, "again", total_turns=40, eval={"every": 0, "games": 2, "opponents": ["hold:300"], "regret_games": 0}
    )
    train_afterstate(load_afterstate_config(path), log=lambda s: None)
    with pytest.raises(Exception, match="already holds a run"):
        train_afterstate(load_afterstate_config(path), log=lambda s: None)
    run = tmp_path / "runs" / "again"
    (run / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="holds notes.txt.*nothing was deleted"):
        train_afterstate(load_afterstate_config(path), force=run, log=lambda s: None)
    assert (run / "notes.txt").read_text() == "mine" and (run / "last.npz").is_file()
    (run / "notes.txt").unlink()
    res = train_afterstate(load_afterstate_config(path), force=run, log=lambda s: None)
    assert res.turns >= 40 and (run / "last.npz").is_file()
    assert not (run / "regret.csv").exists()  # regret is off: nothing solved classic
