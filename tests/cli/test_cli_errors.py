"""Bad arguments found before the work starts: output paths, policy names, seeds, directories
given for files. Each command's work is replaced by a stub that fails the test if reached."""

import pytest

from tenk_env.cli.main import main


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.split())  # rich wraps long lines


def _never(what):
    def stub(*args, **kwargs):
        pytest.fail(f"{what} ran before the arguments were checked")

    return stub


@pytest.fixture
def afile(tmp_path):
    p = tmp_path / "afile"
    p.write_text("x")
    return p


def test_play_save_is_checked_before_the_game(tmp_path, afile, monkeypatch, capsys):
    monkeypatch.setattr("tenk_env.evaluation.play.play_terminal", _never("the game"))
    assert main(["play", "--save", str(tmp_path), "--seed", "1"]) == 2
    assert (
        f"error: --save {str(tmp_path)!r} is a directory; give a file path, e.g. "
        f"{str(tmp_path / 'game.jsonl')!r}" in _out(capsys)
    )
    assert main(["play", "--save", str(afile / "game.jsonl")]) == 2
    assert f"--save {str(afile / 'game.jsonl')!r} cannot be written: {str(afile)!r} is a file, not a directory" in _out(
        capsys
    )


def test_evaluate_csv_is_checked_before_the_games(tmp_path, afile, monkeypatch, capsys):
    monkeypatch.setattr("tenk_env.training.trainer.evaluate_agent", _never("the evaluation"))
    # the checkpoint does not even exist: the --csv check comes first, before any loading
    assert main(["evaluate", str(tmp_path / "nosuch.zip"), "--csv", str(tmp_path)]) == 2
    assert f"error: --csv {str(tmp_path)!r} is a directory; give a file path" in _out(capsys)
    assert main(["evaluate", str(tmp_path / "nosuch.zip"), "--csv", str(afile / "sub" / "e.csv")]) == 2
    assert f"cannot be written: {str(afile)!r} is a file, not a directory" in _out(capsys)


def test_solve_outputs_and_policy_names_are_checked_before_solving(tmp_path, afile, monkeypatch, capsys):
    for name in ("solve_turn", "solve_game", "evaluate"):
        monkeypatch.setattr(f"tenk_env.solve.{name}", _never(name))
    for name in ("exact_eval", "best_response"):
        monkeypatch.setattr(f"tenk_env.policies.exact.{name}", _never(name))
    assert main(["solve", "turn", "classic", "--out", str(tmp_path)]) == 2
    assert (
        f"error: --out {str(tmp_path)!r} is a directory; give a file path, e.g. "
        f"{str(tmp_path / 'classic-turn.csv')!r}" in _out(capsys)
    )
    assert main(["solve", "game", "classic", "--plot", str(afile / "p.png")]) == 2
    assert f"--plot {str(afile / 'p.png')!r} cannot be written: {str(afile)!r} is a file" in _out(capsys)
    assert main(["solve", "eval", "classic", "optimal", "nosuch"]) == 2
    assert "error: unknown agent 'nosuch'; the exact evaluator follows optimal, maxscore, dicenow" in _out(capsys)
    assert main(["solve", "eval", "classic", "optimall", "maxscore"]) == 2
    assert "unknown agent 'optimall' (did you mean 'optimal'?)" in _out(capsys)
    assert main(["solve", "eval", "classic", "hold:-5", "maxscore"]) == 2
    assert "agent 'hold:-5': the bar must be a whole number of points >= 0" in _out(capsys)
    assert main(["solve", "eval", "classic", "random", "dicenow"]) == 2
    assert "agent 'random' cannot be evaluated exactly: it draws its moves at random" in _out(capsys)
    assert main(["solve", "best-response", "classic", "ppo:x.zip"]) == 2
    assert "agent 'ppo:x.zip' cannot be evaluated exactly" in _out(capsys)


def test_output_directories_are_checked(afile, capsys):
    assert main(["rules", "--write-configs", str(afile)]) == 2
    assert f"--write-configs {str(afile)!r} is a file, not a directory" in _out(capsys)
    assert main(["plot", str(afile.parent), "--out", str(afile)]) == 2
    assert f"--out {str(afile)!r} is a file, not a directory" in _out(capsys)


def test_paths_that_can_be_written_pass(tmp_path, afile):
    from tenk_env.cli.args import check_output_dir, check_output_file

    assert check_output_file(tmp_path / "new" / "deeper" / "g.jsonl", "--save", "g.jsonl").name == "g.jsonl"
    check_output_file(afile, "--save", "g.jsonl")  # an existing file is replaced
    check_output_dir(tmp_path / "new" / "plots", "--out")
    check_output_dir(tmp_path, "--out")
    with pytest.raises(ValueError, match="exists and is not a regular file"):
        check_output_file("/dev/null", "--save", "g.jsonl")


@pytest.mark.parametrize("argv", [["play"], ["evaluate", "run"]])
def test_negative_seed_is_refused_in_our_words(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv + ["--seed", "-1"])
    assert e.value.code == 2
    assert "argument --seed: -1 is negative; give a seed >= 0, e.g. --seed 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(argv + ["--seed", "x"])
    assert "argument --seed: 'x' is not an integer" in capsys.readouterr().err


def test_a_directory_given_for_a_file_is_called_a_directory(tmp_path, capsys):
    from tenk_env.io import read_yaml_mapping

    assert main(["rules", str(tmp_path)]) == 2
    assert f"error: ruleset file {str(tmp_path)!r} is a directory, not a file; give a preset name" in _out(capsys)
    with pytest.raises(ValueError, match="config file .* is a directory, not a file; see configs/"):
        read_yaml_mapping(tmp_path, "config", ValueError, "see configs/")
    assert main(["replay", str(tmp_path)]) == 2
    assert "is a directory; give the .jsonl file of one game" in _out(capsys)


def test_tournament_out_is_checked_before_the_games(tmp_path, afile, monkeypatch, capsys):
    monkeypatch.setattr("tenk_env.cli.cmd_tournament.run_tournament", _never("the tournament"))
    argv = ["tournament", "greedy", "hold:300", "--games", "20", "--no-progress", "--out"]
    assert main(argv + [str(afile)]) == 2
    assert f"error: --out {str(afile)!r} is a file, not a directory" in _out(capsys)
    assert main(argv + ["/proc/tenk"]) == 2
    assert "error: --out '/proc/tenk' is under /proc, the kernel's interface, not a place for results" in _out(capsys)


@pytest.mark.parametrize("path", ["/proc/self/x.csv", "/proc/sys/vm/drop_caches", "/sys/kernel/x.png"])
def test_kernel_interfaces_are_no_place_for_results(path):
    from tenk_env.cli.args import check_output_dir, check_output_file

    with pytest.raises(ValueError, match=f"'{path}' is under /(proc|sys), the kernel's interface"):
        check_output_file(path, "--csv", "e.csv")
    with pytest.raises(ValueError, match=f"'{path}.d' is under /(proc|sys), the kernel's interface"):
        check_output_dir(f"{path}.d", "--out")


def test_a_folder_where_no_file_can_be_made_is_refused(tmp_path, monkeypatch):
    """Permission bits do not say it (root passes them, a read-only mount too): a file that
    cannot be made there does."""
    import tempfile

    from tenk_env.cli.args import check_output_dir, check_output_file

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(
        ValueError,
        match=f"--out '{tmp_path}/sub' cannot be written: no file can be made in "
        f"'{tmp_path}' \\(Permission denied\\); give a path in a directory",
    ):
        check_output_dir(tmp_path / "sub", "--out")
    with pytest.raises(ValueError, match="cannot be written: no file can be made in"):
        check_output_file(tmp_path / "e.csv", "--csv", "e.csv")


def test_the_writability_probe_leaves_nothing_behind(tmp_path):
    from tenk_env.cli.args import check_output_dir

    check_output_dir(tmp_path / "new", "--out")
    assert list(tmp_path.iterdir()) == []
