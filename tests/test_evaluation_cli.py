"""cfrkit match / lbr / drl-br on the command line."""
import json

import pytest

from cfrkit.cli import main


def test_lbr_command_always_fold_750(tmp_path, capsys):
    ck = str(tmp_path / "lbr.npz")
    assert main(["lbr", "always-fold", "--bets", "FCPA", "--rounds", "3-4", "--hands", "3", "--checkpoint", ck,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mbb_per_game"] == 750.0 and out["settings"] == "FCPA/3-4"
    # the finished checkpoint is resumed (nothing left to play), same answer
    assert main(["lbr", "always-fold", "--bets", "FCPA", "--rounds", "3-4", "--hands", "3", "--checkpoint", ck,
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mbb_per_game"] == 750.0


def test_match_command_leduc_json(capsys):
    assert main(["match", "always-call", "random", "--game", "leduc", "--hands", "20", "--duplicate", "--aivat",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hands_played"] == 40 and "aivat" in out and "duplicate_estimate" in out


def test_drl_br_command_runs_and_resumes(tmp_path, capsys):
    ck = str(tmp_path / "br.pt")
    args = ["drl-br", "always-call", "--game", "leduc", "--steps", "60", "--eval-hands", "10", "--checkpoint", ck,
            "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["steps"] >= 60
    assert main(args[:5] + ["120"] + args[6:]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] >= 120


@pytest.mark.parametrize("argv,message", [
    (["lbr", "random", "--bets", "FCQ", "--hands", "2", "--no-checkpoint"], "bad LBR bet set"),
    (["lbr", "random", "--rounds", "1-5", "--hands", "2", "--no-checkpoint"], "must lie in 1..4"),
    (["match", "random", "nobody", "--hands", "2"], "unknown agent 'nobody'"),
    (["match", "random", "random", "--game", "kuhn", "--hands", "2"], "not a two-player poker game"),
])
def test_bad_input_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
