"""The command line: solve/resume/exploitability round trip and one-line errors."""
import pytest

from cfrkit.cli import main


def test_solve_resume_and_exploitability(tmp_path, capsys):
    out = str(tmp_path / "kuhn.npz")
    assert main(["solve", "kuhn", "-n", "200", "-o", out, "--no-progress", "--eval-every", "100"]) == 0
    first = capsys.readouterr().out
    assert "iteration      200" in first and "exploitability" in first
    assert main(["solve", "kuhn", "-n", "400", "-o", out, "--no-progress"]) == 0
    resumed = capsys.readouterr()
    assert "resuming" in resumed.err and "iteration      400" in resumed.out
    assert main(["exploitability", "kuhn", out]) == 0
    value = float(capsys.readouterr().out.split()[1])
    assert 0 <= value < 0.01


def test_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "curve.png"
    assert main(["solve", "kuhn", "-n", "50", "--plot", str(png), "--no-progress"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv,message", [
    (["solve", "nope"], "unknown game 'nope'"),
    (["solve", "kuhn", "-n", "0"], "--iterations must be positive"),
    (["solve", "leduc(ranks=40)", "-n", "1"], "nodes"),
    (["exploitability", "kuhn", "/nonexistent.npz"], "no such file"),
])
def test_bad_arguments_give_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_sampling_solver_resumes_and_its_file_is_a_policy(tmp_path, capsys):
    out = str(tmp_path / "kuhn_es.npz")
    assert main(["solve", "kuhn", "-a", "es-mccfr", "-n", "2000", "-o", out, "--no-progress", "--seed", "3"]) == 0
    assert main(["solve", "kuhn", "-a", "es-mccfr", "-n", "4000", "-o", out, "--no-progress"]) == 0
    assert "resuming" in capsys.readouterr().err
    assert main(["exploitability", "kuhn", out]) == 0
    assert float(capsys.readouterr().out.split()[1]) < 0.05
    assert main(["solve", "kuhn", "-a", "cfr+", "-n", "10", "-o", out]) == 2
