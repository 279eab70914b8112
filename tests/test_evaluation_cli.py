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
    (["match", "random", "random", "--game", "leduc", "--hands", "2", "--time-limit", "-1"],
     "--time-limit must be a positive number of seconds, got -1"),
    (["match", "random", "random", "--game", "leduc", "--hands", "2", "--time-limit", "0"],
     "--time-limit must be a positive number"),
    (["match", "deepstack-holdem:/no/such/nets", "always-call", "--hands", "1"], "no hold'em value nets directory"),
    (["match", "random", "random", "--game", "leduc", "--hands", "2", "--aivat", "--fit-opponent", "-1"],
     "--fit-opponent must be >= 0 deals, got -1"),
    (["match", "random", "random", "--game", "leduc", "--hands", "2", "--fit-opponent", "5"], "give --aivat too"),
])
def test_bad_input_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_play_match_refuses_a_non_positive_time_limit():
    from cfrkit.games.base import GameError
    from cfrkit.poker.match import play_match
    from cfrkit.poker.registry import make_agent

    agents = [make_agent("always-call", game="leduc"), make_agent("random", game="leduc", seed=1)]
    for bad in (0, -5, float("nan")):
        with pytest.raises(GameError, match="time_limit must be a positive"):
            play_match("leduc", agents, 2, time_limit=bad)
    assert play_match("leduc", agents, 2, time_limit=float("inf")).hands_played == 4  # inf: no limit


def test_match_deepstack_holdem_says_what_it_uses_before_the_first_hand(monkeypatch, capsys):
    """Without nets A^D sat at 0% for a minute without a word: one line names its leaf values first."""
    import cfrkit.evaluation.headtohead as h2h

    class FirstHand(Exception):
        pass

    def first_hand(*args, **kwargs):  # stands in for the match: everything printed so far came before it
        raise FirstHand

    monkeypatch.setattr(h2h, "head_to_head", first_hand)
    with pytest.raises(FirstHand):
        main(["match", "deepstack-holdem:iterations=50", "always-call", "--hands", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("agent A (deepstack-holdem:iterations=50): leaf values: check-down")
    assert "no value nets" in err[0] and "50 iterations" in err[0] and "seconds" in err[0]
