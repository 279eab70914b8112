"""OpenSpiel conversion without naming games the policy already records."""
import pytest

pyspiel = pytest.importorskip("pyspiel")

from cfrkit.evaluation import nash_conv  # noqa: E402
from cfrkit.games.base import GameError  # noqa: E402
from cfrkit.interop.openspiel import (cfrkit_counterpart, from_openspiel_policy, openspiel_counterpart,  # noqa: E402
                                      to_openspiel_policy)
from cfrkit.policy import TabularPolicy  # noqa: E402
from cfrkit.solvers import CFRSolver  # noqa: E402


def test_round_trip_through_a_policy_file_names_no_game(tmp_path):
    from open_spiel.python.algorithms import exploitability as os_exploitability

    solver = CFRSolver("kuhn(players=3)")
    solver.run(100, progress=False)
    path = str(tmp_path / "k3.npz")
    solver.save(path)
    policy = TabularPolicy.load(path)
    theirs = to_openspiel_policy(policy)                      # games from the file
    value = os_exploitability.nash_conv(pyspiel.load_game("kuhn_poker(players=3)"), theirs)
    assert value == pytest.approx(nash_conv("kuhn(players=3)", policy), abs=1e-9)
    back = from_openspiel_policy(theirs)                      # the game from the OpenSpiel policy
    assert back.game.game_string() == "kuhn(players=3)"
    assert back.metadata["openspiel_game"] == "kuhn_poker(players=3)"
    assert nash_conv(back.game, back) == pytest.approx(nash_conv("kuhn(players=3)", policy), abs=1e-12)


def test_counterparts():
    assert openspiel_counterpart("leduc") == "leduc_poker"
    assert cfrkit_counterpart("leduc_poker") == "leduc"
    assert cfrkit_counterpart("liars_dice") == "openspiel(name=liars_dice())"
    with pytest.raises(GameError, match="pass os_game"):
        openspiel_counterpart("leduc(ranks=4)")
