"""Exact best response / NashConv on the game protocol: known values and agreement with OpenSpiel."""
import numpy as np
import pytest

from cfrkit.evaluation.protocol_br import (GameTree, best_response, expected_values, exploitability,
                                           exploitability_mbb, game_tree, nash_conv)
from cfrkit.games.base import GameError
from cfrkit.policy import TabularPolicy, UniformRandomPolicy, tabulate


class PerPlayer:
    """A profile made of one policy per player."""

    def __init__(self, policies):
        self.policies = policies

    def action_probabilities(self, state, player=None):
        if player is None:
            player = state.current_player()
        return self.policies[player].action_probabilities(state, player)


def kuhn_equilibrium(alpha):
    """The analytical Kuhn equilibrium family (player 0 bets a jack with probability alpha <= 1/3)."""
    bet = lambda p: {0: 1 - p, 1: p}  # noqa: E731  (pass=0, bet=1)
    return TabularPolicy("kuhn", {
        "0": bet(alpha), "1": bet(0.0), "2": bet(3 * alpha),
        "0pb": bet(0.0), "1pb": bet(alpha + 1 / 3), "2pb": bet(1.0),
        "0p": bet(1 / 3), "0b": bet(0.0), "1p": bet(0.0), "1b": bet(1 / 3), "2p": bet(1.0), "2b": bet(1.0),
    })


def random_tabular(game, seed):
    rng = np.random.default_rng(seed)
    uniform = tabulate(game, UniformRandomPolicy())
    table = {}
    for key, probs in uniform.table.items():
        w = rng.random(len(probs)) + 0.05
        table[key] = dict(zip(probs, w / w.sum()))
    return TabularPolicy(game, table)


def test_kuhn_uniform_best_response_values():
    # player 0 best-responding to a uniform player 1 earns 1/2; player 1 against uniform player 0, 5/12
    v0, br0 = best_response("kuhn", UniformRandomPolicy(), 0)
    v1, br1 = best_response("kuhn", UniformRandomPolicy(), 1)
    assert v0 == pytest.approx(0.5, abs=1e-12)
    assert v1 == pytest.approx(5 / 12, abs=1e-12)
    np.testing.assert_allclose(expected_values("kuhn", UniformRandomPolicy()), [0.125, -0.125], atol=1e-12)
    assert nash_conv("kuhn", UniformRandomPolicy()) == pytest.approx(11 / 12, abs=1e-12)
    assert exploitability("kuhn", UniformRandomPolicy()) == pytest.approx(11 / 24, abs=1e-12)
    # the returned policies are deterministic, cover every infoset of their player, and achieve the value
    assert len(br0) == 6 and len(br1) == 6
    assert all(len(p) == 1 and list(p.values()) == [1.0] for p in br0.table.values())
    assert expected_values("kuhn", PerPlayer([br0, UniformRandomPolicy()]))[0] == pytest.approx(v0, abs=1e-12)
    assert expected_values("kuhn", PerPlayer([UniformRandomPolicy(), br1]))[1] == pytest.approx(v1, abs=1e-12)
    # the obvious best responses: facing a bet, call with the king and fold the jack
    assert br0["2pb"] == {1: 1.0} and br0["0pb"] == {0: 1.0}


@pytest.mark.parametrize("alpha", [0.0, 1 / 6, 1 / 3])
def test_kuhn_equilibrium_has_zero_nash_conv_and_value_minus_one_eighteenth(alpha):
    policy = kuhn_equilibrium(alpha)
    assert nash_conv("kuhn", policy) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(expected_values("kuhn", policy), [-1 / 18, 1 / 18], atol=1e-12)
    # a perturbed equilibrium is exploitable
    bad = kuhn_equilibrium(alpha)
    bad["1b"] = {0: 0.5, 1: 0.5}
    assert nash_conv("kuhn", bad) > 1e-3


def test_best_response_beats_every_pure_strategy_in_kuhn():
    # enumerate all 2^6 pure strategies of player 0 against a random player 1: none beats the BR value
    opponent = random_tabular("kuhn", 3)
    value, _ = best_response("kuhn", opponent, 0)
    keys = ["0", "1", "2", "0pb", "1pb", "2pb"]
    best = -np.inf
    for bits in range(64):
        mine = TabularPolicy("kuhn", {k: {(bits >> i) & 1: 1.0} for i, k in enumerate(keys)})
        best = max(best, expected_values("kuhn", PerPlayer([mine, opponent]))[0])
    assert value == pytest.approx(best, abs=1e-12)


def test_rps_pure_strategy_and_simultaneous_game():
    rock = TabularPolicy("turn_based(game=rps)", {"p0": {0: 1.0}, "p1": {0: 1 / 3, 1: 1 / 3, 2: 1 / 3}})
    assert best_response("turn_based(game=rps)", rock, 1)[0] == pytest.approx(1.0)
    assert best_response("turn_based(game=rps)", rock, 1)[1]["p1"] == {1: 1.0}  # paper beats rock
    assert nash_conv("turn_based(game=rps)", rock) == pytest.approx(1.0)
    assert exploitability("rps", rock) == pytest.approx(0.5)  # the simultaneous game is played in turns
    assert nash_conv("rps", UniformRandomPolicy()) == pytest.approx(0.0, abs=1e-15)


def test_leduc_tree_shape_and_infoset_grouping():
    tree = game_tree("leduc")
    assert tree.num_infosets == 936  # OpenSpiel's count for leduc_poker
    assert sum(len(m) for m in tree.infoset_nodes) == sum(1 for k in tree.kind if k == 2)
    assert game_tree("leduc") is tree  # cached


def test_bad_policies_give_clear_errors():
    illegal = TabularPolicy("kuhn", {"0": {0: 0.5, 1: 0.25, 5: 0.25}})
    with pytest.raises(GameError, match="illegal action"):
        nash_conv("kuhn", illegal)
    not_a_distribution = TabularPolicy("kuhn", {"0": {0: 0.5, 1: 0.2}})
    with pytest.raises(GameError, match="not a distribution"):
        nash_conv("kuhn", not_a_distribution)
    with pytest.raises(GameError, match="player must be"):
        best_response("kuhn", UniformRandomPolicy(), 2)
    with pytest.raises(GameError, match="too big"):
        GameTree("leduc", max_nodes=100)


def test_exploitability_in_mbb_per_game():
    # Leduc and Kuhn declare a big blind of 1 chip: mbb/g = 1000 x chips
    assert exploitability_mbb("kuhn", UniformRandomPolicy()) == pytest.approx(1000 * 11 / 24)
    assert exploitability_mbb("leduc(ante=2)", UniformRandomPolicy()) == \
        pytest.approx(500 * exploitability("leduc(ante=2)", UniformRandomPolicy()))
    with pytest.raises(GameError, match="big blind"):
        exploitability_mbb("turn_based(game=rps)", UniformRandomPolicy())
