"""Issue 17 items 1-4: no lost compute in `cfrkit solve`, outputs checked first, resume settings refused."""
from __future__ import annotations

import os

import numpy as np
import pytest

from cfrkit.cli import main
from cfrkit.policy import PolicyFileError, TabularPolicy, save_npz_atomic


def test_checkpoints_do_not_wait_for_evaluation(tmp_path, monkeypatch):
    """--checkpoint-every 10 with --eval-every 1000: a checkpoint is on disk long before the first evaluation."""
    from cfrkit.solvers import CFRSolver

    out = str(tmp_path / "k.npz")
    seen = []
    original = CFRSolver.iterate

    def spy(self, count=1):
        original(self, count)
        seen.append((self.iterations, os.path.exists(out) and CFRSolver.load(out).iterations))

    monkeypatch.setattr(CFRSolver, "iterate", spy)
    assert main(["solve", "kuhn", "-n", "60", "-o", out, "--no-progress", "--eval-every", "1000",
                 "--checkpoint-every", "10"]) == 0
    saved = [s for i, s in seen if s]
    assert saved and min(saved) >= 10 and max(it for it, _ in seen) == 60
    assert any(it < 60 and s for it, s in seen)  # saved before the end


def test_time_based_checkpoint_by_default(tmp_path, monkeypatch):
    """Without --checkpoint-every a run saves every --checkpoint-minutes (default 10); shortened here."""
    import cfrkit.cli.solve_cmd as solve_cmd
    from cfrkit.solvers import CFRSolver

    out = str(tmp_path / "k.npz")
    saves = []
    original = CFRSolver.save
    monkeypatch.setattr(CFRSolver, "save", lambda self, path: (saves.append(self.iterations), original(self, path)))
    clock = [0.0]

    def fake_monotonic():
        clock[0] += 30.0  # every call half a minute later
        return clock[0]

    monkeypatch.setattr(solve_cmd.time, "monotonic", fake_monotonic)
    assert main(["solve", "kuhn", "-n", "200", "-o", out, "--no-progress", "--checkpoint-minutes", "1"]) == 0
    assert len(saves) >= 3 and saves[-1] == 200 and saves[0] < 200


def test_mccfr_checkpoints_on_games_too_big_to_compile(tmp_path, monkeypatch):
    """Issue 17 item 1: es-mccfr on a game with no compiled tree saved nothing with --checkpoint-every."""
    import cfrkit.solvers as solvers
    from cfrkit.solvers.tabular import mccfr

    def too_big(*a, **k):
        raise solvers.TreeTooLargeError("too big (test)")

    monkeypatch.setattr(solvers, "compile_game", too_big)
    saves = []
    original = mccfr.MCCFRSolver.save
    monkeypatch.setattr(mccfr.MCCFRSolver, "save", lambda self, p: (saves.append(self.iterations), original(self, p)))
    out = str(tmp_path / "k8.npz")
    assert main(["solve", "kuhn(players=3)", "-a", "es-mccfr", "-n", "300", "-o", out, "--no-progress",
                 "--checkpoint-every", "100", "--eval-every", "1000"]) == 0
    assert saves[:3] == [100, 200, 300] and mccfr.load_mccfr(out).iterations == 300


@pytest.mark.parametrize("bad", ["file_parent", "missing_parent", "directory"])
def test_unwritable_out_is_refused_before_solving(tmp_path, capsys, bad, monkeypatch):
    from cfrkit.solvers import CFRSolver

    (tmp_path / "afile").write_text("x")
    out = {"file_parent": tmp_path / "afile" / "x.npz", "missing_parent": tmp_path / "nope" / "x.npz",
           "directory": tmp_path}[bad]
    monkeypatch.setattr(CFRSolver, "iterate", lambda *a: pytest.fail("solved before checking --out"))
    assert main(["solve", "kuhn", "-n", "10", "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err


def test_stale_temp_files_are_removed_on_start(tmp_path, capsys):
    out = str(tmp_path / "k.npz")
    dead = out + ".tmp-999999999"  # no such process
    open(dead, "wb").write(b"half a file")
    assert main(["solve", "kuhn", "-n", "10", "-o", out, "--no-progress"]) == 0
    assert not os.path.exists(dead) and os.listdir(tmp_path) == ["k.npz"]
    assert "removed" in capsys.readouterr().err


def test_failed_atomic_write_leaves_no_temp_file(tmp_path):
    path = str(tmp_path / "x.npz")
    with pytest.raises(TypeError):
        save_npz_atomic(path, header={"bad": object()})  # not JSON
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("first, second, message", [
    (["-a", "dcfr", "--alpha", "2"], ["-a", "dcfr", "--alpha", "3"], "--alpha 3.0 (checkpoint: 2.0)"),
    (["-a", "dcfr"], ["-a", "dcfr", "--gamma", "1"], "--gamma 1.0 (checkpoint: 2.0)"),
    (["-a", "cfr"], ["-a", "cfr", "--simultaneous"], "--simultaneous True (checkpoint: False)"),
    (["-a", "es-mccfr", "--seed", "1"], ["-a", "es-mccfr", "--seed", "2"], "--seed 2 (checkpoint: 1)"),
])
def test_changed_settings_on_resume_are_refused(tmp_path, capsys, first, second, message):
    out = str(tmp_path / "r.npz")
    assert main(["solve", "kuhn", "-n", "20", "-o", out, "--no-progress"] + first) == 0
    before = open(out, "rb").read()
    assert main(["solve", "kuhn", "-n", "40", "-o", out, "--no-progress"] + second) == 2
    assert message in capsys.readouterr().err
    assert open(out, "rb").read() == before
    # leaving the setting out resumes, and says where the settings come from
    assert main(["solve", "kuhn", "-n", "40", "-o", out, "--no-progress"] + second[:2]) == 0
    assert "settings from the checkpoint" in capsys.readouterr().err


def test_map_elites_refuses_changed_settings_on_resume(tmp_path, capsys):
    out = str(tmp_path / "me")
    base = ["hanabi", "map-elites", "--out", out, "--individuals", "64", "--initial-random", "32", "--games", "2",
            "--bins", "4", "--length", "5", "--no-progress"]
    assert main(base + ["--seed", "1"]) == 0
    capsys.readouterr()
    for extra, message in ((["--players", "3"], "--players 3 (checkpoint: 2)"),
                           (["--seed", "2"], "--seed 2 (checkpoint: 1)"),
                           (["--games", "5"], "--games 5 (checkpoint: 2)")):
        assert main(base[:-7] + ["--individuals", "96", "--no-progress"] + extra) == 2
        assert message in capsys.readouterr().err
    assert main(base[:4] + ["--individuals", "96", "--no-progress"]) == 0
    assert "settings from the checkpoint" in capsys.readouterr().out


def test_broken_pipe_is_quiet(tmp_path):
    """`cfrkit games | head -1` printed a BrokenPipeError traceback."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(f"{sys.executable} -m cfrkit games | head -1", shell=True, cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
