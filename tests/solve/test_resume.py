"""A long pass beside the equilibrium (a bot's evaluation, a best response, the exploitability's
two passes) keeps its progress in the cache, so a run stopped part-way (a closed terminal, a
machine taken back) goes on from there: to the same floats as a run never stopped, and with
no trace left once it finishes."""

from __future__ import annotations

import numpy as np
import pytest
from test_equilibrium import THREE

from tenk_env.policies.exact import exact_br_beside_equilibrium, exact_eval_beside_equilibrium
from tenk_env.solve import eq_seat, equilibrium_exploitability, solve_equilibrium

RULES = THREE["final_round"]  # a final round: its tables are part of what is kept


class Stop(Exception):
    pass


def _stop_past(fraction: float):
    def progress(f: float) -> None:
        if f > fraction:
            raise Stop

    return progress


def _partials(cache) -> list:
    return sorted(p.name for p in cache.glob("*partial*"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    monkeypatch.setattr(eq_seat, "CHECKPOINT_SECONDS", 0.0)  # keep the progress after every level
    solve_equilibrium(RULES, 3)
    return tmp_path


def test_a_stopped_evaluation_resumes_to_the_same_floats(cache):
    whole = exact_eval_beside_equilibrium(RULES, "dicenow", 3, cache=False)
    with pytest.raises(Stop):
        exact_eval_beside_equilibrium(RULES, "dicenow", 3, progress=_stop_past(0.5))
    assert len(_partials(cache)) == 1
    seen: list[float] = []
    e = exact_eval_beside_equilibrium(RULES, "dicenow", 3, progress=seen.append)
    assert seen[0] > 0.5  # the levels solved before the stop are not solved again
    assert e.stats["resumed_at"] > 0.5 and e.stats["seconds_before"] > 0.0
    assert np.array_equal(e.p_seat, whole.p_seat)
    assert _partials(cache) == []


def test_a_stopped_best_response_resumes_with_the_tables_it_plays_from(cache):
    whole = exact_br_beside_equilibrium(RULES, ["equilibrium", "equilibrium"], cache=False)
    with pytest.raises(Stop):
        exact_br_beside_equilibrium(RULES, ["equilibrium", "equilibrium"], progress=_stop_past(0.3))
    br = exact_br_beside_equilibrium(RULES, ["equilibrium", "equilibrium"])
    assert np.array_equal(br.p_seat, whole.p_seat)
    # the responder's turn solves and largest last change count the levels before the stop
    assert br.stats["turns_solved"] == whole.stats["turns_solved"] > 0
    assert br.stats["residual"] == whole.stats["residual"]
    for name in ("U0", "U1", "TRIG0"):
        assert np.array_equal(getattr(br, name), getattr(whole, name)), name
    assert sorted(br.finals) == sorted(whole.finals)
    for t in whole.finals:
        assert np.array_equal(br.finals[t], whole.finals[t]), t
    assert _partials(cache) == []


def test_a_stopped_exploitability_resumes_in_either_pass(cache):
    whole = equilibrium_exploitability(RULES, 3, cache=False)
    # stopped in the first pass (the best response), then in the second (the strategy as played)
    with pytest.raises(Stop):
        equilibrium_exploitability(RULES, 3, progress=_stop_past(0.25))
    assert len(_partials(cache)) == 1
    with pytest.raises(Stop):
        equilibrium_exploitability(RULES, 3, progress=_stop_past(0.75))
    assert len(_partials(cache)) == 1  # the first pass is done and cached; the second's progress
    x = equilibrium_exploitability(RULES, 3)
    assert np.array_equal(x.br, whole.br) and np.array_equal(x.played, whole.played)
    assert x.nash_conv == whole.nash_conv
    assert _partials(cache) == []


def test_a_damaged_progress_file_is_ignored(cache):
    whole = exact_eval_beside_equilibrium(RULES, "maxscore", 3, cache=False)
    with pytest.raises(Stop):
        exact_eval_beside_equilibrium(RULES, "maxscore", 3, progress=_stop_past(0.5))
    (part,) = cache.glob("*partial*")
    part.write_bytes(b"not a file numpy wrote")
    seen: list[float] = []
    e = exact_eval_beside_equilibrium(RULES, "maxscore", 3, progress=seen.append)
    assert seen[0] < 0.5 and e.stats["resumed_at"] == 0.0  # started again, from the final round
    assert np.array_equal(e.p_seat, whole.p_seat)
    assert _partials(cache) == []
