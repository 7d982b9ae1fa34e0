"""The batched engine (tenk_env.vector) against the scalar engine (tenk_env.game).

The agreement tests feed the scalar :class:`Game` and :class:`BatchedGame` the same dice
(one stream per game, taken by both) and the same random legal actions, and compare after
every step: every state field of every game, the legal-action masks, game ends, winners and
final scores, and the aggregated statistics.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tenk_env.game import Game, Phase
from tenk_env.rules import PRESETS, Ruleset
from tenk_env.vector import BatchedGame, IllegalActionError
from tenk_env.vector.envs import TenThousandVectorEnv
from tenk_env.vector.layout import (
    F_CURRENT,
    F_GAME,
    F_ORDERN,
    F_PHASE,
    F_ROLLS,
    MAX_FACES,
    ORDER_Q,
    ORDER_T,
    P_TURNS,
    PH_ORDER,
    dice_counter,
    keyed_faces,
    table_arrays,
)


class DiceStreams:
    """One stream of faces per game. The scalar games and each batched engine read it through
    their own cursors, so all of them get the same dice in the same order."""

    def __init__(self, n_games: int, seed: int, chunk: int = 4096):
        self.rng = np.random.default_rng(seed)
        self.chunk = chunk
        self.buf = self.rng.integers(1, 7, size=(n_games, chunk), dtype=np.int64)
        self.scalar_at = np.zeros(n_games, np.int64)

    def _room(self, need: int) -> None:
        while need > self.buf.shape[1]:
            more = self.rng.integers(1, 7, size=(self.buf.shape[0], self.chunk), dtype=np.int64)
            self.buf = np.concatenate([self.buf, more], axis=1)

    def source(self):
        """A DiceSource for one batched engine, with its own cursor."""
        at = np.zeros(self.buf.shape[0], np.int64)

        def dice(games: np.ndarray, n: np.ndarray) -> np.ndarray:
            self._room(int((at[games] + 8).max()))
            rows = self.buf[games[:, None], at[games][:, None] + np.arange(8)[None, :]]
            at[games] += n
            return rows

        return dice

    def take(self, b: int, n: int) -> list[int]:
        at = int(self.scalar_at[b])
        self._room(at + n)
        self.scalar_at[b] = at + n
        return self.buf[b, at : at + n].tolist()


def scalar_mask(g: Game, n_actions: int) -> list[int]:
    if g.phase == Phase.PIGGYBACK:
        return [128, 129]
    return [k.mask | (64 if end else 0) for k, end in g.legal_moves()]


STATE_FIELDS = (
    "phase",
    "current",
    "turn",
    "turn_total",
    "dice_left",
    "rolls",
    "final_round",
    "final_turns_left",
    "trigger",
    "piggy_dice",
    "piggy_total",
    "roll_id",
)


def scalar_row(g: Game, roll_index) -> tuple:
    piggy = g.piggy or (0, 0)
    return (
        int(g.phase),
        g.current,
        g.turn,
        g.turn_total,
        g.dice_left,
        g.rolls,
        int(g.final_round),
        g.final_turns_left,
        -1 if g.trigger is None else g.trigger,
        piggy[0],
        piggy[1],
        roll_index[g.dice] if g.dice else -1,
    )


def seat_rows(g: Game) -> tuple:
    rank = [-1] * g.n_players
    for i, q in enumerate(g.reached):
        rank[q] = i
    return (g.scores, [int(x) for x in g.on_board], g.busts_in_row, rank)


def choose(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions; half the games prefer rolling on, so turns run long (hot dice,
    roll limits, big totals) and games reach the end-game rules."""
    w = mask.astype(np.float64)
    eager = rng.random(len(mask)) < 0.5
    w[eager, :64] *= 6.0
    cs = np.cumsum(w, axis=1)
    u = rng.random(len(mask)) * cs[:, -1]
    return np.argmax(cs > u[:, None], axis=1)


def scalar_arrays(games: list[Game], roll_index, n_actions: int):
    """(state rows, seat rows, legal masks) of the scalar games, as arrays."""
    rows = np.array([scalar_row(g, roll_index) for g in games])
    seats = np.array([seat_rows(g) for g in games])  # (B, 4, P)
    want = np.zeros((len(games), n_actions), bool)
    for b, g in enumerate(games):
        want[b, scalar_mask(g, n_actions)] = True
    return rows, seats, want


def check_same(e: BatchedGame, games: list[Game], scalar, steps: int) -> None:
    """Every state field, seat field and legal-action mask of every game."""
    rows, seats, want = scalar
    batch = len(games)
    mine = np.stack([getattr(e, f) for f in STATE_FIELDS], axis=1)
    if not np.array_equal(rows, mine):
        b = int(np.argmax((rows != mine).any(axis=1)))
        raise AssertionError(
            f"step {steps}, game {b}: scalar {dict(zip(STATE_FIELDS, rows[b]))} "
            f"!= batched {dict(zip(STATE_FIELDS, mine[b]))}\n{games[b]!r}"
        )
    mine = np.stack([e.scores, e.on_board, e.busts_in_row, e.reached], axis=1)
    if not np.array_equal(seats, mine):
        b = int(np.argmax((seats != mine).reshape(batch, -1).any(axis=1)))
        raise AssertionError(
            f"step {steps}, game {b}: scalar seats {seats[b].tolist()} != batched "
            f"{mine[b].tolist()} (scores, on_board, busts_in_row, reached)\n{games[b]!r}"
        )
    mask = e.legal_mask()
    if not np.array_equal(mask, want):
        b = int(np.argmax((mask != want).any(axis=1)))
        raise AssertionError(
            f"step {steps}, game {b}: scalar legal actions "
            f"{np.flatnonzero(want[b]).tolist()} != batched {np.flatnonzero(mask[b]).tolist()}"
            f"\n{games[b]!r}"
        )


def run_agreement(rules: Ruleset, n_players: int, batch: int, min_steps: int, seed: int = 0, record: bool = False):
    """Play ``batch`` games side by side in the scalar engine and in the batched engine for
    ``min_steps`` decisions in all; assert they agree after every step.
    Returns (batched engines, finished scalar games, scalar games in play)."""
    streams = DiceStreams(batch, seed)
    engines = [BatchedGame(rules, n_players, batch, dice=streams.source())]
    rng = np.random.default_rng(seed + 1)
    roll_index = table_arrays(engines[0].rules).roll_index
    games: list[Game] = []
    finished: list[Game] = []

    def advance(b: int) -> list[Game]:
        """Roll game b to its next decision, restarting finished games like auto_reset."""
        ended = []
        g = games[b]
        while True:
            while g.phase in (Phase.ROLL, Phase.ORDER):
                g.roll(streams.take(b, g.dice_to_roll))
            if g.phase != Phase.OVER:
                return ended
            ended.append(g)
            g = games[b] = Game(rules, n_players, record=record)

    for b in range(batch):
        games.append(Game(rules, n_players, record=record))
        assert advance(b) == []
    keep_of = {info.dice: {k.mask: k for k in info.keeps} for info in engines[0].tables.rolls.values()}
    steps = 0
    n_games = 0
    wins = np.zeros(n_players, np.int64)
    while steps < min_steps:
        scalar = scalar_arrays(games, roll_index, engines[0].n_actions)
        for e in engines:
            check_same(e, games, scalar, steps)
        # one action per game, in every engine
        actions = choose(engines[0].legal_mask(), rng)
        dones = [e.step(actions).copy() for e in engines]
        steps += batch
        for b, g in enumerate(games):
            a = int(actions[b])
            if g.phase == Phase.PIGGYBACK:
                g.piggyback(a == 128)
            else:
                g.act(keep_of[g.dice][a & 63], bool(a & 64))
            ended = advance(b)
            if ended:
                n_games += len(ended)
                finished.extend(ended)
                for h in ended:
                    for q in h.winners:
                        wins[q] += 1
            for e, done in zip(engines, dones):
                assert len(ended) == done[b], (
                    f"step {steps}, game {b}: scalar ended {len(ended)} games, batched {done[b]}"
                )
                if ended:
                    first = ended[0]
                    won = [int(q in first.winners) for q in range(n_players)]
                    assert e.winners[b].tolist() == won, f"game {b}: winners {first.winners} vs {e.winners[b]}"
                    assert e.final_scores[b].tolist() == first.scores, (b, first.scores, e.final_scores[b])
    scalar = scalar_arrays(games, roll_index, engines[0].n_actions)
    for e in engines:
        check_same(e, games, scalar, steps)
        if record:  # the per-seat game counters against the events of the games in play
            for b, g in enumerate(games):
                busts = [
                    sum(1 for ev in g.events if ev["type"] == "bust" and ev["player"] == q) for q in range(n_players)
                ]
                banked = [
                    sum(ev["points"] for ev in g.events if ev["type"] == "bank" and ev["player"] == q)
                    for q in range(n_players)
                ]
                assert e.game_busts[b].tolist() == busts and e.game_banked[b].tolist() == banked, b
        st = e.stats
        assert st["decisions"] == steps
        assert st["games"] == n_games
        assert st["wins"].tolist() == wins.tolist()
    return engines, finished, games


VARIANTS = {
    # every preset, 2 players
    **{f"{name}-2p": (rules, 2) for name, rules in PRESETS.items()},
    # 3+ players
    "classic-3p": (PRESETS["classic"], 3),
    "bc_society-4p": (PRESETS["bc_society"].replace(target=3000), 4),
    "zilch-3p": (PRESETS["zilch"], 3),
    "classic-8p-low": (PRESETS["classic"].replace(target=2000, turn_order="highest_die"), 8),
    # options no preset switches on
    "piggyback": (PRESETS["scribd_farkle"].replace(piggyback=True, target=4000), 2),
    "piggyback-3p": (PRESETS["classic"].replace(piggyback=True, entry_threshold=0, target=3000), 3),
    "exact-forfeit": (PRESETS["classic"].replace(exact_finish="forfeit", target=2000), 2),
    "exact-to_lowest-3p": (PRESETS["classic"].replace(exact_finish="to_lowest", target=2000), 3),
    "bust-penalty": (PRESETS["scribd_farkle"].replace(bust_penalty=1000, bust_penalty_after=2), 2),
    "lose-all": (PRESETS["wikihow"].replace(four_twos_lose_all=True, target=3000), 2),
    "instant-any": (PRESETS["classic"].replace(six_of_a_kind_wins="any", target=3000), 3),
    "tie-shared-3p": (PRESETS["classic"].replace(tie="shared", target=1000, entry_threshold=0), 3),
    "komi-one-more-roll": (PRESETS["classic"].replace(komi=500, end="one_more_roll", target=2000), 2),
    "max-rolls-mandatory": (
        PRESETS["classic"].replace(max_rolls=2, hot_dice="mandatory", min_bank=300, target=3000),
        2,
    ),
    "five-dice-final-round": (PRESETS["inform_five_dice"].replace(end="final_round", target=3000), 3),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_agreement(variant):
    """Scalar == batched, step for step: 100,000 steps for every preset, 40,000 for
    each of the other variants (options no preset switches on, 3 to 8 players)."""
    rules, n_players = VARIANTS[variant]
    preset = variant.endswith("-2p") and variant[:-3] in PRESETS
    # fewer games side by side for the variants: longer histories, so that more games end
    engines, finished, _ = run_agreement(
        rules,
        n_players,
        batch=200 if preset else 50,
        min_steps=100_000 if preset else 40_000,
        seed=zlib.crc32(variant.encode()),
    )
    assert len(finished) > 40


# ---------------------------------------------------------------------- own dice
class KeyedSource:
    """A DiceSource dealing the engine's own keyed dice, computed in NumPy from the state of
    ``engine`` (game, seat, turn, roll) by :func:`layout.keyed_faces`. Fed to an engine, it
    makes the engine stop at every roll (the path the agreement tests check against the
    scalar game) while dealing the dice the fused kernel draws inside."""

    def __init__(self, keys: np.ndarray):
        self.keys = keys
        self.engine: BatchedGame | None = None

    def __call__(self, ix: np.ndarray, n: np.ndarray) -> np.ndarray:
        e = self.engine
        if e is None:  # the constructor's opening deal, redone by the reset that follows;
            # one highest face, so that an order roll ends
            return np.tile(np.arange(MAX_FACES) % 6 + 1, (len(ix), 1))
        S, PS = e._S, e._PS
        cur = S[F_CURRENT, ix]
        is_order = S[F_PHASE, ix] == PH_ORDER
        turn = np.where(is_order, ORDER_T, PS[P_TURNS, ix, cur] - 1)
        seat = np.where(is_order, ORDER_Q, cur)
        roll = np.where(is_order, S[F_ORDERN, ix], S[F_ROLLS, ix])
        return keyed_faces(self.keys[ix], dice_counter(S[F_GAME, ix], turn, seat, roll), n, MAX_FACES)


@pytest.mark.parametrize(
    "variant",
    [
        "classic-2p",
        "bc_society-4p",
        "piggyback-3p",
        "zilch-3p",
        "exact-to_lowest-3p",
        "lose-all",
        "classic-8p-low",
        "five-dice-final-round",
    ],
)
def test_own_dice_fused_kernel_agrees(variant):
    """Seeded dice: the fused kernel (action and rolls in one pass, dice drawn inside) plays
    the games the engine plays when it stops at every roll and is dealt the same keyed dice
    from outside, the path the agreement tests hold to the scalar game."""
    rules, n_players = VARIANTS[variant]
    a = BatchedGame(rules, n_players, 512, seed=7)
    src = KeyedSource(a.dice_keys)
    b = BatchedGame(rules, n_players, 512, dice=src)
    src.engine = b
    b.reset(dice_keys=a.dice_keys)
    rng = np.random.default_rng(3)
    for step in range(400):
        np.testing.assert_array_equal(a._S, b._S, err_msg=f"step {step}")
        np.testing.assert_array_equal(a._PS, b._PS, err_msg=f"step {step}")
        np.testing.assert_array_equal(a.legal_mask(), b.legal_mask())
        actions = choose(a.legal_mask(), rng)
        np.testing.assert_array_equal(a.step(actions), b.step(actions))
        assert a.last_stats["wins"].tolist() == b.last_stats["wins"].tolist()
    sa, sb = a.stats, b.stats
    assert sa.pop("wins").tolist() == sb.pop("wins").tolist()
    assert sa == sb and sa["games"] > 100


def test_seed_reproducible_and_batch_independent():
    kw = dict(rules="classic", n_players=2)
    runs = []
    for batch, seed in ((64, 5), (64, 5), (64, 6)):
        e = BatchedGame(batch_size=batch, seed=seed, **kw)
        rng = np.random.default_rng(0)
        for _ in range(200):
            e.step(e.random_actions(rng))
        runs.append((e._S.copy(), e._PS.copy(), e.stats["games"]))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][1], runs[2][1])
    # reset(seed) restarts every game and every stream
    e = BatchedGame(batch_size=64, seed=99, **kw)
    first = e._S.copy()
    e.step(e.random_actions(np.random.default_rng(1)))
    e.reset(seed=99)
    assert np.array_equal(e._S, first) and e.stats["decisions"] == 0


def test_threads_do_not_change_results():
    es = [BatchedGame("classic", 3, 301, seed=2, threads=t) for t in (1, 2)]
    rng = np.random.default_rng(0)
    for _ in range(100):
        a = es[0].random_actions(rng)
        for e in es:
            e.step(a)
        assert np.array_equal(es[0]._PS, es[1]._PS) and np.array_equal(es[0]._S, es[1]._S)
    assert es[0].stats["points_banked"] == es[1].stats["points_banked"] > 0


def test_dice_are_fair():
    """The keyed dice: faces uniform, independent across the two halves of an output and
    across rolls, and the bust rate of six dice is the published 2.31% (RULES.md)."""
    from tenk_env.vector.layout import K_BUST, dice_counter, faces_to_roll, keyed_faces

    n = 100_000
    keys = np.random.default_rng(0).integers(0, 2**63, size=n, dtype=np.uint64)
    z = np.zeros(n, np.int64)
    faces = keyed_faces(keys, dice_counter(z + 1, z, z, z), np.full(n, 6), 8)
    assert (faces[:, 6:] == 0).all()
    counts = np.bincount(faces[:, :6].ravel(), minlength=7)[1:]
    expected = 6 * n / 6
    assert ((counts - expected) ** 2 / expected).sum() < 20.5, counts  # chi2, 5 dof, p = 0.001
    pairs = np.bincount((faces[:, 0] - 1) * 6 + faces[:, 1] - 1, minlength=36)  # one output's two dice
    assert ((pairs - n / 36) ** 2 / (n / 36)).sum() < 66.6, pairs  # chi2, 35 dof, p = 0.001
    nxt = keyed_faces(keys, dice_counter(z + 1, z, z, z + 1), np.full(n, 6), 8)  # the next roll
    pairs = np.bincount((faces[:, 2] - 1) * 6 + nxt[:, 2] - 1, minlength=36)
    assert ((pairs - n / 36) ** 2 / (n / 36)).sum() < 66.6, pairs
    ta = table_arrays(PRESETS["classic"])
    bust = (ta.roll_kind[faces_to_roll(ta, faces)] == K_BUST).mean()
    assert abs(bust - 0.0231) < 0.002


def test_duplicate_dice_keys():
    """Two slots with one key deal each seat the same dice at the same (turn, roll) (the
    first n of the same faces when n dice are rolled), however differently the games go; a
    third slot with another key does not."""
    e = BatchedGame("classic", 2, 3, dice_keys=[7, 7, 8])
    rng = np.random.default_rng(0)
    seen = [{}, {}, {}]
    for _ in range(3000):
        for b in range(3):
            if e.phase[b] == 3:
                q = int(e.current[b])
                at = (int(e._S[F_GAME, b]), q, int(e._PS[P_TURNS, b, q]), int(e.rolls[b]), int(e.dice_left[b]))
                seen[b][at] = e.state(b)["dice"]
        e.step(e.random_actions(rng))  # independent random play in each slot
    common = set(seen[0]) & set(seen[1])
    assert len(common) > 200
    assert all(seen[0][k] == seen[1][k] for k in common)
    other = set(seen[0]) & set(seen[2])
    assert sum(seen[0][k] == seen[2][k] for k in other) < len(other) / 2


def test_random_actions_are_legal_and_uniform():
    e = BatchedGame("classic", 2, 2000, seed=1)
    mask = e.legal_mask().copy()
    picks = np.stack([e.random_actions(np.random.default_rng(i)) for i in range(200)])
    assert mask[np.arange(2000)[None, :], picks].all()
    b = int(np.argmax(mask.sum(axis=1)))
    hist = np.bincount(picks[:, b], minlength=128)[mask[b]]
    assert hist.min() > 0 and hist.max() < 4 * hist.min() + 20


# ---------------------------------------------------------------------- statistics
@pytest.mark.parametrize(
    "variant",
    ["zilch-3p", "piggyback", "exact-to_lowest-3p", "lose-all", "instant-any", "tie-shared-3p", "max-rolls-mandatory"],
)
def test_stats_match_scalar_events(variant):
    """Every counter equals the count of the matching events in the scalar game records."""
    rules, n_players = VARIANTS[variant]
    engines, finished, playing = run_agreement(rules, n_players, batch=50, min_steps=10_000, seed=11, record=True)
    events = [ev for g in finished + playing for ev in g.events]
    kinds: dict[str, int] = {}
    for ev in events:
        kinds[ev["type"]] = kinds.get(ev["type"], 0) + 1
    expect = {
        "games": len(finished),
        "decisions": kinds.get("keep", 0) + kinds.get("piggyback", 0),
        "rolls": kinds.get("roll", 0),
        "turns": kinds.get("turn", 0),
        "busts": kinds.get("bust", 0),
        "banks": kinds.get("bank", 0),
        "points_banked": sum(ev["points"] for ev in events if ev["type"] == "bank"),
        "stops": kinds.get("stop", 0),
        "overshoots": kinds.get("overshoot", 0),
        "penalties": kinds.get("penalty", 0),
        "zilch": kinds.get("zilch", 0),
        "lose_all": kinds.get("lose_all", 0),
        "instant_wins": kinds.get("instant_win", 0),
        "piggybacks": sum(1 for ev in events if ev["type"] == "piggyback" and ev["take"]),
        "shared_wins": sum(1 for g in finished if len(g.winners) > 1),
    }
    for e in engines:
        got = e.stats
        got.pop("wins")
        assert got == expect


# ---------------------------------------------------------------------- directed cases
def scripted(rolls_by_game: dict[int, list[list[int]]], n_games: int):
    """A DiceSource that deals each game its scripted rolls, then 2-3-4-6 busts... (never
    used past the script in these tests: running out fails)."""
    queues = {b: [list(r) for r in rolls_by_game.get(b, [])] for b in range(n_games)}

    def dice(games, n):
        out = np.zeros((len(games), 8), np.int64)
        for i, b in enumerate(games):
            roll = queues[int(b)].pop(0)
            assert len(roll) == n[i], f"game {b} wants {n[i]} dice, the script has {roll}"
            out[i, : len(roll)] = roll
        return out

    return dice


def test_slot_that_finishes_twice_in_one_call():
    """Game 1 ends on the bank (immediate win); the slot's new game ends on its first roll
    (six 1s win at once): done counts 2, the slot reports the first game."""
    rules = PRESETS["wikihow"].replace(end="immediate", target=100)
    e = BatchedGame(
        rules,
        2,
        1,
        dice=scripted({0: [[1, 2, 3, 4, 6, 6], [1, 1, 1, 1, 1, 1], [2, 3, 4, 6, 6, 3], [2, 2, 3, 4, 6, 5]]}, 1),
    )
    assert e.phase[0] == Phase.DECIDE and e.state(0)["dice"] == (1, 2, 3, 4, 6, 6)
    done = e.step(np.array([1 | 64]))  # keep the 1 (100) and bank: reaches the target
    assert done[0] == 2
    assert e.winners[0].tolist() == [1, 0] and e.final_scores[0].tolist() == [100, 0]
    st = e.last_stats
    assert st["games"] == 2 and st["instant_wins"] == 1 and st["wins"].tolist() == [2, 0]
    # the third game: seat 0 busts, seat 1 rolls 2 2 3 4 5 6 and decides
    assert e.current[0] == 1 and e.state(0)["dice"] == (2, 2, 3, 4, 5, 6)


def test_auto_reset_off():
    rules = PRESETS["classic"].replace(entry_threshold=0, target=300)
    e = BatchedGame(rules, 2, 4, seed=3, auto_reset=False)
    rng = np.random.default_rng(0)
    for _ in range(500):
        if not e.awaiting().any():
            break
        e.step(e.random_actions(rng))
    assert (e.phase == Phase.OVER).all() and e.stats["games"] == 4
    assert (e.legal_mask() == 0).all()
    assert e.winners.sum(axis=1).tolist() == [1, 1, 1, 1]
    with pytest.raises(IllegalActionError, match="game 2 is not waiting for an action.*reset_games"):
        e.step(np.zeros(4, np.int64), games=[2])
    e.step(np.zeros(4, np.int64))  # no game is waiting: nothing happens
    assert e.last_stats["decisions"] == 0
    e.reset_games(np.array([False, True, False, True]))
    assert e.awaiting().tolist() == [False, True, False, True]
    assert e.to_game(0).over and e.to_game(0).winners == [q for q in range(2) if e.winners[0, q]]


def test_step_a_subset():
    e = BatchedGame("classic", 2, 8, seed=1)
    before = e._S.copy()
    a = e.random_actions(np.random.default_rng(0))
    e.step(a, games=np.array([1, 5]))
    changed = (e._S != before).any(axis=0)
    assert changed[[1, 5]].all() and not changed[[0, 2, 3, 4, 6, 7]].any()
    assert e.last_stats["decisions"] == 2


def decide_game(rules, dice, n_players=2, **kw):
    """A one-game batch whose first roll is ``dice``."""
    return BatchedGame(rules, n_players, 1, dice=scripted({0: [list(dice)]}, 1), **kw)


def test_illegal_actions_name_the_game_and_the_reason():
    e = decide_game("classic", (1, 1, 5, 2, 3, 4))  # sorted: 1 1 2 3 4 5
    cases = [
        (200, "outside 0..127"),
        (-1, "outside 0..127"),
        (0, "at least one scoring die"),
        (2, r"canonical mask 000001"),  # the second 1 alone: must be named by the first
        (4, r"the 2 in \[2\] does not score"),
        (1 | 64, "entry threshold 500"),  # bank 100 before being on the board
    ]
    for action, why in cases:
        with pytest.raises(IllegalActionError, match=f"game 0: .*{why}"):
            e.step(np.array([action]))
    assert e.stats["decisions"] == 0 and e.state(0)["dice"] == (1, 1, 2, 3, 4, 5)  # nothing changed
    with pytest.raises(ValueError, match=r"expected shape \(1,\)"):
        e.step(np.array([1, 1]))
    with pytest.raises(ValueError, match="integer actions"):
        e.step(np.array([1.5]))
    with pytest.raises(ValueError, match="game indices must be 0..0"):
        e.step(np.array([1]), games=[3])
    # the first illegal game of many is the one named
    big = BatchedGame("classic", 2, 50, seed=0)
    a = big.random_actions(np.random.default_rng(0))
    a[17] = 0
    with pytest.raises(IllegalActionError, match="^game 17: "):
        big.step(a)


def test_roll_limit_and_piggyback_errors():
    rules = PRESETS["inform_five_dice"]  # three rolls a turn
    e = BatchedGame(rules, 2, 1, dice=scripted({0: [[1, 2, 3, 4, 6], [1, 2, 3, 4], [1, 2, 3]]}, 1))
    e.step(np.array([1]))
    e.step(np.array([1]))
    with pytest.raises(IllegalActionError, match="3-roll limit"):
        e.step(np.array([1]))
    rules = PRESETS["classic"].replace(piggyback=True, entry_threshold=0)
    e = BatchedGame(rules, 2, 1, dice=scripted({0: [[1, 2, 3, 4, 6, 6], [2, 3, 4, 6, 6, 2]]}, 1))
    assert e.n_actions == 130
    e.step(np.array([1 | 64]))  # bank 100, leaving five dice
    assert e.phase[0] == Phase.PIGGYBACK and e.legal_mask()[0].nonzero()[0].tolist() == [128, 129]
    with pytest.raises(IllegalActionError, match="choose whether to piggyback.*128.*5 dice.*100 points"):
        e.step(np.array([1]))


def test_retired_numpy_backend_is_refused_by_name():
    """Code written for the NumPy engine gets a message naming the retirement and the fix;
    the names that always meant the numba engine still build it."""
    msg = r"backend 'numpy' was retired: the numba engine is the only one .*drop the backend option"
    with pytest.raises(ValueError, match=msg):
        BatchedGame("classic", 2, 4, backend="numpy")
    with pytest.raises(ValueError, match=msg):
        TenThousandVectorEnv(4, "classic", 2, opponents="random", backend="numpy")
    for name in ("auto", "numba"):
        assert BatchedGame("classic", 2, 4, seed=0, backend=name).batch_size == 4


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_players = 1"):
        BatchedGame("classic", 1)
    with pytest.raises(ValueError, match="batch_size = 0"):
        BatchedGame("classic", 2, 0)
    with pytest.raises(ValueError, match="backend = 'cuda'"):
        BatchedGame("classic", 2, 4, backend="cuda")
    with pytest.raises(ValueError, match="dice_keys"):
        BatchedGame("classic", 2, 4, dice_keys=[1, 2])
    with pytest.raises(ValueError, match="legal_mask"):
        BatchedGame("classic", 2, 4).legal_mask(out=np.zeros((4, 10), bool))
    with pytest.raises(ValueError, match="faces must be 1 to 6"):
        BatchedGame("classic", 2, 2, dice=lambda g, n: np.full((len(g), 8), 7))
    with pytest.raises(ValueError, match="dice source returned shape"):
        BatchedGame("classic", 2, 2, dice=lambda g, n: np.ones((len(g), 2), np.int64))


def test_to_game_matches_state_and_masks():
    from tenk_env.vector.engine import game_state

    e = BatchedGame(PRESETS["scribd_farkle"].replace(piggyback=True), 3, 64, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(50):
        mask = e.legal_mask()
        for b in range(64):
            g = e.to_game(b)
            assert game_state(g) == e.state(b)
            assert sorted(scalar_mask(g, e.n_actions)) == np.flatnonzero(mask[b]).tolist()
        e.step(e.random_actions(rng))


# ---------------------------------------------------------------------- vectorised bots
BOT_SPECS = ["dicenow", "hold:300", "greedy", "breakeven", "hold:1000", "greedy:450", "maxscore"]
BOT_VARIANTS = [
    "classic-2p",
    "zilch-3p",
    "bc_society-4p",
    "piggyback-3p",
    "exact-forfeit",
    "exact-to_lowest-3p",
    "inform_five_dice-2p",
    "busche_neller_2017-2p",
    "komi-one-more-roll",
    "max-rolls-mandatory",
    "farkle_official-2p",
    "instant-any",
]


@pytest.mark.parametrize("variant", BOT_VARIANTS)
def test_batched_bots_decide_like_scalar_bots(variant):
    """In every state the games reach, each vectorised bot picks the scalar bot's move."""
    from tenk_env.policies.base import make_agent
    from tenk_env.policies.batched import batched_agent

    rules, n_players = VARIANTS[variant]
    rules = rules.replace(target=min(rules.target, 4000))  # reach the end-game rules often
    scalar = [make_agent(s) for s in BOT_SPECS]
    batched = [batched_agent(s) for s in BOT_SPECS]
    B = 48
    e = BatchedGame(rules, n_players, B, seed=zlib.crc32(variant.encode()))
    rng = np.random.default_rng(0)
    out = np.zeros(B, np.int64)
    compared = 0
    for step in range(110):
        aw = np.flatnonzero(e.awaiting())
        for bot, ref in zip(batched, scalar):
            bot.act(e, aw, rng, out)
            for b in aw:
                g = e.to_game(int(b))
                if e.phase[b] == Phase.PIGGYBACK:
                    want = 128 if ref.piggyback(g, rng) else 129
                else:
                    k, end = ref.decide(g, rng)
                    want = k.mask | 64 if end else k.mask
                assert out[b] == want, (
                    f"{ref.name}, step {step}, game {b}: batched {out[b]} != scalar {want} in {e.state(int(b))}"
                )
                compared += 1
        # play on with the bots (each slot its own bot for seat 0, dicenow elsewhere) plus
        # some random moves, so the states are varied
        actions = e.random_actions(rng)
        for i, bot in enumerate(batched):
            g = aw[(aw % len(batched)) == i]
            bot.act(e, g, rng, actions)
        wild = aw[rng.random(len(aw)) < 0.15]
        e.random_actions(rng, actions, games=wild)
        e.step(actions)
    assert compared > 15_000 and e.stats["games"] > 3


def test_keyed_roll_draws_the_engines_faces():
    """The scalar engine's KeyedDice draw with keyed_roll (plain Python), the batched engine
    with keyed_faces (NumPy) or its numba kernel: the same faces for every counter field."""
    from tenk_env.vector.layout import dice_counter, keyed_faces, keyed_roll

    rng = np.random.default_rng(0)
    for _ in range(2000):
        k, g, t = int(rng.integers(0, 2**64, dtype=np.uint64)), int(rng.integers(0, 9)), int(rng.integers(0, 2**20))
        q, r, n = int(rng.integers(0, 8)), int(rng.integers(0, 4096)), int(rng.integers(1, 9))
        c = dice_counter(np.array([g]), np.array([t]), np.array([q]), np.array([r]))
        assert keyed_faces(np.array([k], np.uint64), c, np.array([n]), 8)[0, :n].tolist() == keyed_roll(
            k, g, t, q, r, n
        )


DEAL_AGENTS = ["dicenow", "hold:300", "maxscore", "greedy:400", "breakeven", "dicenow", "hold:500", "greedy"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_deals_agree_with_the_scalar_engine(variant):
    """A tournament's deals on the batched engine (play_deals_batched) and on the scalar one
    (play_deals, with KeyedDice): the same per-game rows (scores, wins, turns, each agent's
    turns and busts, who moved first) for every preset and variant, every seating."""
    from tenk_env.evaluation.match import Chunk, chunk_tasks, play_deals, play_deals_batched
    from tenk_env.policies.base import make_agent

    rules, n = VARIANTS[variant]
    specs = DEAL_AGENTS[:n]
    tasks = chunk_tasks("v", rules, list(range(n)), 3, 150)  # two chunks, in one batch
    scalar = play_deals(rules, [make_agent(a) for a in specs], 3, 0, 150)
    batched = Chunk.concat(play_deals_batched(rules, specs, tasks))
    for f in ("seating", "scores", "win", "turns", "agent_turns", "busts", "first"):
        np.testing.assert_array_equal(getattr(scalar, f), getattr(batched, f), err_msg=f)
    assert len(set(scalar.first.tolist())) == n  # every agent moved first in some game


# ---------------------------------------------------------------------- observations and adapters
@pytest.mark.parametrize(
    "variant",
    [
        "classic-2p",
        "bc_society-4p",
        "piggyback-3p",
        "zilch-3p",
        "komi-one-more-roll",
        "max-rolls-mandatory",
        "inform_five_dice-2p",
        "bust-penalty",
    ],
)
def test_encode_batch_equals_scalar_encoding(variant):
    from tenk_env.obs import encode
    from tenk_env.vector.obs import encode_batch

    rules, n_players = VARIANTS[variant]
    e = BatchedGame(rules.replace(target=min(rules.target, 3000)), n_players, 64, seed=1, auto_reset=False)
    rng = np.random.default_rng(0)
    for step in range(400):
        for seat in range(n_players):
            seats = (np.arange(64) + seat) % n_players
            got = encode_batch(e, seats)
            want = np.stack([encode(e.to_game(b), int(seats[b])) for b in range(64)])
            assert np.array_equal(got, want), (step, np.argwhere(got != want)[:5])
        if not e.awaiting().any():
            break
        e.step(e.random_actions(rng))
    assert (e.phase == Phase.OVER).sum() > 10  # the OVER encoding was compared too


ENV_CASES = {
    "classic": (PRESETS["classic"], 2, ["dicenow"], 0, "win"),
    "piggyback-3p": (
        PRESETS["classic"].replace(piggyback=True, entry_threshold=0, target=3000),
        3,
        ["dicenow", "hold:350"],
        1,
        "shaped",
    ),
    "one-more-roll": (PRESETS["bc_society"].replace(target=3000), 2, ["breakeven"], 1, "win"),
    "to_lowest-3p": (
        PRESETS["classic"].replace(exact_finish="to_lowest", target=2000),
        3,
        ["greedy", "dicenow"],
        2,
        "shaped",
    ),
    "zilch": (PRESETS["zilch"].replace(target=4000), 2, ["hold:300"], 0, "shaped"),
    "instant-win": (PRESETS["wikihow"].replace(target=3000, tie="shared"), 2, ["dicenow"], 1, "win"),
}


class _ScalarDice:
    """TenThousandEnv's dice (``draw(k)``) from one game's stream of DiceStreams."""

    def __init__(self, streams: DiceStreams, b: int):
        self.streams, self.b = streams, b

    def draw(self, k: int) -> list[int]:
        return self.streams.take(self.b, k)


@pytest.mark.parametrize("case", list(ENV_CASES))
def test_vector_env_equals_scalar_envs(case):
    """TenThousandVectorEnv against one TenThousandEnv per slot, fed the same dice and the
    same actions: observations, rewards, ends, masks and infos agree at every step."""
    from tenk_env.env import TenThousandEnv
    from tenk_env.vector.envs import TenThousandVectorEnv

    rules, n_players, opponents, seat, reward = ENV_CASES[case]
    B = 32
    streams = DiceStreams(B, seed=zlib.crc32(case.encode()))
    venv = TenThousandVectorEnv(
        B, rules, n_players, opponents=opponents, seat=seat, reward=reward, dice=streams.source()
    )
    envs = [
        TenThousandEnv(rules, n_players, opponents=opponents, seat=seat, reward=reward, backend="python")
        for _ in range(B)
    ]
    obs, info = venv.reset(seed=0)
    for b, env in enumerate(envs):
        env.reset(seed=b)  # creates the env's generator; its dice then come from the stream
        env._dice = _ScalarDice(streams, b)
        o, i = env.reset()
        assert np.array_equal(obs[b], o) and np.array_equal(info["action_mask"][b], i["action_mask"])
        assert (info["banked"][b], info["busts"][b], info["seat"][b]) == (i["banked"], i["busts"], i["seat"])
    rng = np.random.default_rng(1)
    ends = 0
    for step in range(300):
        actions = choose(venv.action_masks(), rng)
        obs, rew, term, trunc, info = venv.step(actions)
        assert not trunc.any()
        for b, env in enumerate(envs):
            o, r, t, _, i = env.step(int(actions[b]))
            assert t == term[b] and r == rew[b], (step, b, r, rew[b])
            if t:
                ends += 1
                fi = {k: v[b] for k, v in info["final_info"].items() if not k.startswith("_")}
                assert np.array_equal(info["final_obs"][b], o)
                assert fi["winners"].nonzero()[0].tolist() == i["winners"] and fi["winner"] == i["winner"]
                assert fi["won"] == i["won"] and fi["final_scores"].tolist() == i["final_scores"]
                for k in ("turns", "episode_busts", "episode_banked", "banked", "busts"):
                    assert fi[k] == i[k], (k, fi[k], i[k])
                o, i = env.reset()
            assert np.array_equal(obs[b], o), (step, b)
            assert np.array_equal(info["action_mask"][b], i["action_mask"])
            assert (info["banked"][b], info["busts"][b], info["seat"][b]) == (i["banked"], i["busts"], i["seat"])
    assert ends > 20


def test_vector_env_illegal_actions():
    from tenk_env.vector.envs import TenThousandVectorEnv

    venv = TenThousandVectorEnv(4, "classic", 2, opponents="hold:300", seat=0)
    obs, info = venv.reset(seed=5)
    a = choose(venv.action_masks(), np.random.default_rng(0))
    a[2] = 0  # keeps nothing: illegal everywhere
    obs2, rew, term, trunc, info2 = venv.step(a)
    assert info2["illegal_action"].tolist() == [False, False, True, False]
    assert rew[2] == -0.01 and np.array_equal(obs2[2], obs[2])
    strict = TenThousandVectorEnv(4, "classic", 2, opponents="hold:300", strict=True)
    strict.reset(seed=5)
    with pytest.raises(IllegalActionError, match="^env 3: action 0 .*at least one scoring die"):
        strict.step(np.r_[choose(strict.action_masks(), np.random.default_rng(0))[:3], 0])
    with pytest.raises(ValueError, match="outside the action space"):
        strict.step(np.full(4, 300))
    with pytest.raises(ValueError, match="opponents: 2 given for 1 other seat"):
        TenThousandVectorEnv(4, "classic", 2, opponents=["dicenow", "dicenow"])


def test_vector_env_pool_and_gymnasium_conventions():
    from gymnasium.vector import AutoresetMode

    from tenk_env.vector.envs import TenThousandVectorEnv

    venv = TenThousandVectorEnv(64, "classic", 3, pool=[("dicenow", 1.0), ("random", 1.0)], reward="shaped")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=1)
    assert venv.observation_space.contains(obs) and (info["action_mask"].sum(axis=1) > 0).all()
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        obs, rew, term, trunc, info = venv.step(choose(venv.action_masks(), rng))
        assert venv.observation_space.contains(obs)
        seen |= set(np.unique(venv.seat_agent).tolist())
        if term.any():
            b = int(np.flatnonzero(term)[0])
            assert info["final_obs"][b][51] == 1.0 and info["final_info"]["_won"][b]  # game_over flag
    assert seen == {-1, 0, 1}
    again = TenThousandVectorEnv(64, "classic", 3, pool=[("dicenow", 1.0), ("random", 1.0)], reward="shaped")
    o1, _ = again.reset(seed=1)
    o2, _ = venv.reset(seed=1)
    assert np.array_equal(o1, o2)  # reproducible from the seed
    venv.set_opponents(pool=[("hold:300", 1.0), ("greedy", 0.0)])
    for _ in range(100):
        obs, rew, term, trunc, info = venv.step(choose(venv.action_masks(), rng))
    with pytest.raises(ValueError, match="keep its length"):
        venv.set_opponents(pool=[("hold:300", 1.0)])


def test_maskable_ppo_learns_on_the_sb3_vec_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecEnv

    from tenk_env.vector.sb3 import sb3_vec_env

    venv = sb3_vec_env(32, "classic", opponents="hold:300")
    assert isinstance(venv, VecEnv)
    venv.seed(0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(32 * 8)
    assert model.num_timesteps >= 256
    obs = venv.reset()
    dones_seen = 0
    for _ in range(60):
        masks = venv.action_masks()
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[np.arange(32), action].all()
        obs, rew, dones, infos = venv.step(action)
        for b in np.flatnonzero(dones):
            assert infos[b]["terminal_observation"].shape == obs[b].shape and "won" in infos[b]
            dones_seen += 1
    assert dones_seen > 0


def test_batched_ppo_decides_like_the_scalar_ppo_agent():
    pytest.importorskip("sb3_contrib")
    from tenk_env.policies.batched import BatchedPPO, batched_agent
    from tenk_env.policies.ppo import untrained_ppo

    ppo = untrained_ppo("classic", 2, seed=3)
    bot = batched_agent(ppo)
    assert isinstance(bot, BatchedPPO)
    e = BatchedGame("classic", 2, 64, seed=2)
    rng = np.random.default_rng(0)
    out = np.zeros(64, np.int64)
    for _ in range(60):
        aw = np.flatnonzero(e.awaiting())
        bot.act(e, aw, rng, out)
        for b in aw:
            k, end = ppo.decide(e.to_game(int(b)), rng)
            assert out[b] == (k.mask | 64 if end else k.mask)
        e.step(out, games=aw)


def test_bot_kernel_without_numba_decides_the_same():
    """Without numba the bot loop runs as Python: the same code, the same decisions."""
    from tenk_env.policies import batched as ab

    if not hasattr(ab._bot_kernel, "py_func"):
        pytest.skip("numba is not installed: the Python loop is what the other tests ran")
    e = BatchedGame("zilch", 3, 32, seed=6)
    rng = np.random.default_rng(0)
    for _ in range(40):
        aw = np.flatnonzero(e.awaiting())
        t = ab._tabs(e)
        for kind, bar in ((ab.HOLD, 300), (ab.GREEDY, 250), (ab.DICENOW, 0), (ab.BREAKEVEN, 0)):
            a1, a2 = np.zeros(32, np.int64), np.zeros(32, np.int64)
            for f, out in ((ab._bot_kernel, a1), (ab._bot_kernel.py_func, a2)):
                f(aw, kind, bar, e._S, e._PS, e._rc, t.keep_pts, t.keep_list, t.keep_cnt, t.bust, t.mean, t.c, out)
            assert np.array_equal(a1, a2)
        st = e.tables.derived("vector.maxscore", ab._SolverTabs)
        a1, a2 = np.zeros(32, np.int64), np.zeros(32, np.int64)
        for f, out in ((ab._maxscore_kernel, a1), (ab._maxscore_kernel.py_func, a2)):
            f(aw, e._S, e._PS, e._rc, t.keep_pts, t.keep_list, t.keep_cnt, st.keep_rank, st.values, st.unit, t.c, out)
        assert np.array_equal(a1, a2)
        e.step(e.random_actions(rng))
