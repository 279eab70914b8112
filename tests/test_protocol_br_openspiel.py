"""Protocol best response / NashConv agree with OpenSpiel's Python implementation to 1e-9."""
import numpy as np
import pytest

from cfrkit.evaluation.protocol_br import best_response, expected_values, exploitability, nash_conv

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import best_response as os_best_response  # noqa: E402
from open_spiel.python.algorithms import cfr as os_cfr  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

from cfrkit.interop.openspiel import from_openspiel_policy  # noqa: E402

PAIRS = [("kuhn", "kuhn_poker"), ("kuhn(players=3)", "kuhn_poker(players=3)"), ("leduc", "leduc_poker")]


def os_policies(os_game_string):
    """Uniform, random tabular and CFR-trained OpenSpiel policies (Python TabularPolicy)."""
    game = pyspiel.load_game(os_game_string)
    uniform = os_policy.TabularPolicy(game)
    rng = np.random.default_rng(7)
    rand = os_policy.TabularPolicy(game)
    w = (rng.random(rand.action_probability_array.shape) + 0.01) * rand.legal_actions_mask
    rand.action_probability_array = w / w.sum(axis=1, keepdims=True)
    if game.num_players() == 2 and os_game_string.startswith("leduc"):
        solver = pyspiel.CFRSolver(game)  # C++ CFR: Python CFR is slow on Leduc
        for _ in range(30):
            solver.evaluate_and_update_policy()
        trained = os_policy.pyspiel_policy_to_python_policy(game, solver.tabular_average_policy())
    else:
        solver = os_cfr.CFRSolver(game)
        for _ in range(30):
            solver.evaluate_and_update_policy()
        trained = solver.average_policy()
    return game, {"uniform": uniform, "random": rand, "cfr": trained}


@pytest.mark.parametrize("ours,theirs", PAIRS)
def test_nash_conv_equals_openspiel(ours, theirs):
    game, policies = os_policies(theirs)
    for name, policy in policies.items():
        converted = from_openspiel_policy(policy, game, ours)
        expected = os_exploitability.nash_conv(game, policy)
        assert nash_conv(ours, converted) == pytest.approx(expected, abs=1e-9), name
        assert exploitability(ours, converted) == pytest.approx(expected / game.num_players(), abs=1e-9), name
        # and through the OpenSpiel adapter game (keys are OpenSpiel's strings there)
        adapted = from_openspiel_policy(policy, game, f"openspiel(name={theirs})")
        assert nash_conv(f"openspiel(name={theirs})", adapted) == pytest.approx(expected, abs=1e-9), name


@pytest.mark.parametrize("ours,theirs", PAIRS)
def test_best_response_values_equal_openspiel(ours, theirs):
    game, policies = os_policies(theirs)
    policy = policies["random"]
    converted = from_openspiel_policy(policy, game, ours)
    for player in range(game.num_players()):
        expected = os_best_response.BestResponsePolicy(game, player, policy).value(game.new_initial_state())
        assert best_response(ours, converted, player)[0] == pytest.approx(expected, abs=1e-9)
    on_policy = os_exploitability.nash_conv(game, policy, return_only_nash_conv=False).player_improvements
    brs = [best_response(ours, converted, p)[0] for p in range(game.num_players())]
    np.testing.assert_allclose(np.array(brs) - expected_values(ours, converted), on_policy, atol=1e-9)
