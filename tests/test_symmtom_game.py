"""SymmToM in the cfrkit game protocol: consistency, full traversal, chance distribution, errors."""
import collections
import itertools
from fractions import Fraction

import numpy as np
import pytest

from cfrkit.games import registry
from cfrkit.games.base import CHANCE, SIMULTANEOUS, GameError
from cfrkit.games.consistency import check_game
from cfrkit.games.symmtom import BatchedSymmToM, SymmToMConfig, fixed_start

TINY = "symmtom(agents=2,width=4,pieces=2,steps=2,start=fixed)"


@pytest.mark.parametrize("game", [
    TINY,
    "symmtom(agents=3,width=4,pieces=4,steps=5)",
    "symmtom(agents=4,width=5,pieces=6,steps=4,hide_first_hand=true,oracle=true)",
    "symmtom",
    f"turn_based(game={TINY})",
    "turn_based(game=symmtom(agents=3,width=4,pieces=3,steps=4))",
])
def test_consistency(game):
    result = check_game(game, num_playthroughs=40)
    assert result["terminals"] == 40


def _expected_returns(state):
    """Exact expected returns under uniform random joint actions (full traversal)."""
    if state.is_terminal():
        return np.array(state.returns()), 1
    if state.current_player() == CHANCE:
        total, leaves = 0.0, 0
        for a, p in state.chance_outcomes():
            v, k = _expected_returns(state.child(a))
            total, leaves = total + p * v, leaves + k
        return total, leaves
    if state.current_player() == SIMULTANEOUS:
        n = state.game.num_players
        options = [state.legal_actions(p) for p in range(n)]
        total, leaves, count = 0.0, 0, 0
        for joint in itertools.product(*options):
            child = state.clone()
            child.apply_actions(list(joint))
            v, k = _expected_returns(child)
            total, leaves, count = total + v, leaves + k, count + 1
        return total / count, leaves
    legal = state.legal_actions()
    total, leaves = 0.0, 0
    for a in legal:
        v, k = _expected_returns(state.child(a))
        total, leaves = total + v, leaves + k
    return total / len(legal), leaves


def test_tiny_instance_traversal_matches_batched_monte_carlo():
    game = registry.load(TINY)
    exact, leaves = _expected_returns(game.new_initial_state())
    assert leaves >= 2 * 100 * 100                       # every joint history was visited
    seq, _ = _expected_returns(registry.load(f"turn_based(game={TINY})").new_initial_state())
    np.testing.assert_allclose(seq, exact, atol=1e-12)
    # independent engine: batched numpy environment, random first-hand on the fixed layout
    cfg = SymmToMConfig(agents=2, width=4, pieces=2, steps=2)
    B = 40000
    rng = np.random.default_rng(0)
    owner0 = rng.integers(0, 2, B)
    starts = [fixed_start(cfg, [1 << 0, 1 << 1] if o == 0 else [1 << 1, 1 << 0]) for o in owner0]
    bat = BatchedSymmToM(cfg, B, seed=1)
    bat.reset(starts)
    for _ in range(2):
        bat.step(rng.integers(0, 5, (B, 2)), rng.integers(0, 2, (B, 2)))
    mean = bat.returns.mean(axis=0)
    se = bat.returns.std(axis=0) / np.sqrt(B)
    assert np.all(np.abs(mean - exact) < 4 * se + 1e-9), (mean, exact, se)
    assert exact.min() > 0


def test_first_hand_chance_is_uniform_over_balanced_assignments():
    game = registry.load("symmtom(agents=3,width=4,pieces=4)")
    probs = collections.defaultdict(Fraction)

    def walk(state, p):
        if state.owners is not None and len(state.owners) == 4:
            probs[tuple(state.owners)] += p
            return
        for a, q in state.chance_outcomes():
            walk(state.child(a), p * Fraction(q).limit_denominator(1000))

    walk(game.new_initial_state(), Fraction(1))
    assert len(probs) == 3 * 12                           # extra holder x arrangements of the multiset
    assert all(p == Fraction(1, 36) for p in probs.values())


def test_positions_chance_and_serialization():
    game = registry.load("symmtom(agents=2,width=4,pieces=2,steps=3)")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while state.current_player() == CHANCE:
        outcomes = state.chance_outcomes()
        assert abs(sum(p for _, p in outcomes) - 1) < 1e-12
        state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
    assert len(set(state.positions)) == 2 and len(set(state.bases)) == 2
    state.apply_actions([1, 7])
    text = state.serialize()
    again = game.deserialize_state(text)
    assert again.positions == state.positions and again.information_state_string(0) == state.information_state_string(0)
    assert state.observation_tensor(0).shape == game.observation_tensor_shape()
    assert "say" in state.action_to_string(7, 1)


def test_information_state_hides_others_speech_out_of_range():
    game = registry.load("symmtom(agents=2,width=6,pieces=2,steps=3,start=fixed)")
    s = game.new_initial_state()
    s.apply_action(0)                                    # piece 0 to agent 0 (piece 1 forced to agent 1)
    # fixed layout: agents at (0,0) and (0,2): 2 apart, cannot hear each other
    a = s.clone()
    b = s.clone()
    a.apply_actions([0 * 2 + 0, 0 * 2 + 1])               # both stay, say own pieces
    b.apply_actions([0 * 2 + 1, 0 * 2 + 1])               # agent 0 says an unknown piece (silence)
    assert a.information_state_string(1) == b.information_state_string(1)
    assert a.information_state_string(0) != b.information_state_string(0)
    assert a.returns() == [0.0, 0.0]


def test_collision_coin_is_a_chance_node():
    game = registry.load("symmtom(agents=2,width=4,pieces=1,steps=2,start=fixed)")
    s = game.new_initial_state()
    s.apply_action(0)
    # agents at (0,0) and (0,2) both move into (0,1): right (4) and left (3), piece 0
    s.apply_actions([4 * 1 + 0, 3 * 1 + 0])
    assert s.current_player() == CHANCE and s.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    first = s.child(1)
    assert first.positions == [(0, 0), (0, 1)]
    second = s.child(0)
    assert second.positions == [(0, 1), (0, 2)]


@pytest.mark.parametrize("text,match", [
    ("symmtom(width=3)", "2h\\+1 < w"),
    ("symmtom(start=corner)", "start must be"),
    ("symmtom(agents=1)", "at least 2 agents"),
    ("symmtom(pieces=x)", "type of its default"),
    ("symmtom(colours=3)", "unknown parameter"),
])
def test_bad_game_strings(text, match):
    with pytest.raises(GameError, match=match):
        registry.load(text)
