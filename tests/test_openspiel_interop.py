"""OpenSpiel adapter (protocol consistency) and policy conversion both ways."""
import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

from cfrkit.evaluation.protocol_br import exploitability, nash_conv  # noqa: E402
from cfrkit.games import registry  # noqa: E402
from cfrkit.games.base import GameError, IllegalActionError  # noqa: E402
from cfrkit.games.consistency import check_game  # noqa: E402
from cfrkit.interop.openspiel import OpenSpielGame, from_openspiel_policy, to_openspiel_policy  # noqa: E402
from cfrkit.policy import TabularPolicy, UniformRandomPolicy  # noqa: E402
from cfrkit.solvers.tabular.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR  # noqa: E402


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "liars_dice",
                                  "matrix_rps", "turn_based_simultaneous_game(game=goofspiel(num_cards=3))",
                                  "tic_tac_toe"])
def test_adapter_passes_consistency_checks(name):
    counts = check_game(f"openspiel(name={name})", num_playthroughs=100)
    assert counts["terminals"] == 100


def test_adapter_game_strings_and_attributes():
    game = registry.load("openspiel(name=kuhn_poker(players=3))")
    assert isinstance(game, OpenSpielGame) and game.num_players == 3
    assert game.game_string() == "openspiel(name=kuhn_poker(players=3))"
    assert registry.load(game.game_string()) == game
    assert registry.load("openspiel(name=leduc_poker)") == registry.load("openspiel(name=leduc_poker())")
    assert "openspiel" in registry.list_games()
    leduc = registry.load("openspiel(name=leduc_poker)")
    assert leduc.constant_sum and leduc.utility_sum == 0.0 and leduc.perfect_recall
    assert registry.load("openspiel(name=matrix_rps)").simultaneous
    state = leduc.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 6
    state.apply_action(0)
    state.apply_action(3)
    assert state.legal_actions() == [1, 2]
    assert state.information_state_tensor(0).shape == leduc.information_state_tensor_shape()
    with pytest.raises(IllegalActionError, match="legal"):
        state.apply_action(0)  # fold without facing a bet


def test_adapter_errors_are_one_line():
    with pytest.raises(GameError) as err:
        registry.load("openspiel(name=no_such_game)")
    assert "no_such_game" in str(err.value) and "\n" not in str(err.value)


def random_os_policy(game, seed):
    policy = os_policy.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    w = (rng.random(policy.action_probability_array.shape) + 0.01) * policy.legal_actions_mask
    policy.action_probability_array = w / w.sum(axis=1, keepdims=True)
    return policy


@pytest.mark.parametrize("ours,theirs", [("kuhn", "kuhn_poker"), ("kuhn(players=3)", "kuhn_poker(players=3)"),
                                         ("leduc", "leduc_poker")])
def test_policy_round_trip_is_exact(ours, theirs):
    game = pyspiel.load_game(theirs)
    original = random_os_policy(game, 1)
    converted = from_openspiel_policy(original, game, ours)
    assert len(converted) == len(original.state_lookup)
    back = to_openspiel_policy(converted, ours, theirs)
    np.testing.assert_array_equal(back.action_probability_array, original.action_probability_array)
    assert nash_conv(ours, converted) == pytest.approx(os_exploitability.nash_conv(game, original), abs=1e-9)


def test_cpp_policy_and_uniform_conversion():
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRSolver(game)
    for _ in range(10):
        solver.evaluate_and_update_policy()
    ours = from_openspiel_policy(solver.tabular_average_policy(), game, "leduc")
    assert nash_conv("leduc", ours) == pytest.approx(pyspiel.nash_conv(game, solver.tabular_average_policy()),
                                                     abs=1e-9)
    uniform = to_openspiel_policy(UniformRandomPolicy(), "leduc", game)
    assert os_exploitability.nash_conv(game, uniform) == pytest.approx(nash_conv("leduc", UniformRandomPolicy()),
                                                                       abs=1e-12)


@pytest.mark.parametrize("cls", [ExternalSamplingMCCFR, OutcomeSamplingMCCFR])
def test_mccfr_policy_exploitability_equals_openspiel(cls):
    solver = cls("leduc", seed=0)
    solver.run(2000, progress=False)
    policy = solver.average_policy()
    converted = to_openspiel_policy(policy, "leduc", "leduc_poker")
    theirs = os_exploitability.exploitability(pyspiel.load_game("leduc_poker"), converted)
    assert exploitability("leduc", policy) == pytest.approx(theirs, abs=1e-9)


def test_mccfr_runs_on_an_openspiel_game():
    name = "openspiel(name=kuhn_poker)"
    solver = ExternalSamplingMCCFR(name, seed=0)
    solver.run(200, progress=False)
    early = exploitability(name, solver.average_policy())
    solver.run(10000, progress=False)
    late = exploitability(name, solver.average_policy())
    assert late < 0.5 * early and late < 0.04
    converted = to_openspiel_policy(solver.average_policy(), name, "kuhn_poker")
    assert os_exploitability.exploitability(pyspiel.load_game("kuhn_poker"), converted) == \
        pytest.approx(late, abs=1e-9)


def test_mismatched_games_are_refused():
    with pytest.raises(GameError, match="differ"):
        from_openspiel_policy(os_policy.UniformRandomPolicy(pyspiel.load_game("leduc_poker")), "leduc_poker", "kuhn")
    with pytest.raises(GameError, match="players"):
        to_openspiel_policy(UniformRandomPolicy(), "kuhn", "kuhn_poker(players=3)")
    with pytest.raises(GameError, match="differ"):  # same shape, different ante
        to_openspiel_policy(TabularPolicy("leduc(ante=2)"), "leduc(ante=2)", "leduc_poker")


def test_illegal_probabilities_are_refused():
    bad = TabularPolicy("kuhn", {"0": {0: 0.5, 1: 0.25, 3: 0.25}})
    with pytest.raises(GameError, match="illegal"):
        to_openspiel_policy(bad, "kuhn", "kuhn_poker")
