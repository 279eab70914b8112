"""The game protocol: registry, errors, consistency of every registered game, agreement with OpenSpiel."""
import random

import pytest

from cfrkit.games import (CHANCE, GameError, IllegalActionError, deserialize_state, list_games, load)
from cfrkit.games.consistency import ConsistencyError, check_game
from cfrkit.games.registry import register, unregister
from cfrkit.games.kuhn import KuhnPoker

# Parameter variants beyond each registered game's defaults.
VARIANTS = ["kuhn(players=3)", "kuhn(players=4)", "leduc(ranks=4,suits=3)", "leduc(max_raises=3)",
            "leduc_nolimit(stack=1200)", "leduc_nolimit(fractions=0.5;1;2,stack=600)", "turn_based(game=rps)",
            "turn_based(game=matrix(rows=2,cols=3,row_payoffs=1;2;3;4;5;6))"]


@pytest.mark.parametrize("game", sorted(set(list_games()) | set(VARIANTS)))
def test_every_registered_game_is_consistent(game):
    counts = check_game(game, num_playthroughs=60, seed=1)
    assert counts["terminals"] == 60


def test_consistency_check_catches_a_broken_game():
    class BrokenKuhn(KuhnPoker):
        def new_initial_state(self):
            state = super().new_initial_state()
            state.returns = lambda: [1.0, 1.0]  # not zero-sum
            return state

    with pytest.raises(ConsistencyError, match="do not sum"):
        check_game(BrokenKuhn(), num_playthroughs=5)


def test_register_and_unregister_a_game():
    register("kuhn_for_a_while", KuhnPoker, {}, "Kuhn under a second name (test)")
    try:
        assert "kuhn_for_a_while" in list_games()
        assert load("kuhn_for_a_while").num_distinct_actions() == load("kuhn").num_distinct_actions()
    finally:
        unregister("kuhn_for_a_while")
    assert "kuhn_for_a_while" not in list_games()
    with pytest.raises(GameError, match="unknown game"):
        load("kuhn_for_a_while")
    unregister("kuhn_for_a_while")  # not registered: left alone


def test_unknown_game_and_parameter_errors_list_what_is_known():
    with pytest.raises(GameError, match="known games: .*leduc"):
        load("no_such_game")
    with pytest.raises(GameError, match="known .*stack=1200"):
        load("leduc_nolimit(stak=1000)")
    with pytest.raises(GameError, match="must be of the type"):
        load("kuhn(players=two)")
    with pytest.raises(GameError, match="malformed"):
        load("leduc(ranks)")


def test_illegal_action_names_the_legal_ones():
    state = load("leduc").new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    with pytest.raises(IllegalActionError, match=r"legal: 1 \(call\), 2 \(raise\)"):
        state.apply_action(0)
    with pytest.raises(IllegalActionError, match="not legal for chance"):
        load("kuhn").new_initial_state().apply_action(7)


def test_history_round_trip_and_clone_independence():
    game = load("leduc_nolimit")
    rng = random.Random(3)
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    text = state.serialize()
    again = deserialize_state(text)
    assert again.history() == state.history() and again.returns() == state.returns()
    clone = state.clone()
    assert clone.history() == state.history()
    with pytest.raises(GameError):
        deserialize_state("leduc|0,0")  # the same card dealt twice


def test_game_deserializes_its_states_under_any_spelling_of_its_string():
    game = load("leduc_nolimit(fractions=0.5;1)")
    state = game.new_initial_state().child(0).child(3).child(1)
    # another spelling of the same game (a default written out, a float for an int): the same state
    other = "leduc_nolimit(stack=1200.0,fractions=1;0.5,ante=100)|" + state.serialize().split("|")[1]
    assert game.deserialize_state(other).serialize() == state.serialize()
    with pytest.raises(GameError, match="belongs to game"):
        game.deserialize_state("leduc_nolimit|0,3,1")  # the default fractions: another game
    with pytest.raises(GameError, match="unknown game"):
        game.deserialize_state("nosuchgame|0")


def test_game_strings_are_canonical():
    assert load("leduc_nolimit(stack=1200)").game_string() == "leduc_nolimit"
    g = load("leduc_nolimit(stack=600,fractions=0.5;1)")
    assert load(g.game_string()) == g
    assert g.params["fractions"] == (0.5, 1.0)


def _compare_with_openspiel(ours, theirs, playthroughs, seed):
    """Random playthroughs in lockstep: chance outcomes, legal actions, players and returns agree."""
    pyspiel = pytest.importorskip("pyspiel")
    og = pyspiel.load_game(theirs)
    g = load(ours)
    rng = random.Random(seed)
    for _ in range(playthroughs):
        a, b = g.new_initial_state(), og.new_initial_state()
        while not a.is_terminal():
            assert not b.is_terminal()
            if a.is_chance_node():
                assert b.is_chance_node()
                ours_out = sorted(a.chance_outcomes())
                theirs_out = sorted(b.chance_outcomes())
                assert [x for x, _ in ours_out] == [x for x, _ in theirs_out]
                assert all(abs(p - q) < 1e-12 for (_, p), (_, q) in zip(ours_out, theirs_out))
            else:
                assert a.current_player() == b.current_player()
                assert a.legal_actions() == b.legal_actions()
            action = rng.choice(a.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
        assert b.is_terminal()
        assert a.returns() == pytest.approx(b.returns(), abs=1e-12)


@pytest.mark.parametrize("ours,theirs", [("kuhn", "kuhn_poker"), ("kuhn(players=3)", "kuhn_poker(players=3)"),
                                         ("leduc", "leduc_poker")])
def test_rules_agree_with_openspiel(ours, theirs):
    _compare_with_openspiel(ours, theirs, playthroughs=2000, seed=7)


def test_nolimit_leduc_bets_follow_deepstack_sizing():
    state = load("leduc_nolimit").new_initial_state()
    state.apply_action(0)
    state.apply_action(2)
    # both in for 100: pot after call 200 -> a pot bet raises to 300; all-in to 1200
    assert state.raise_to_amounts() == [(2, 300), (3, 1200)]
    state.apply_action(2)
    # facing 300 with 100 in: pot after call 600 -> raise to 900 (min raise 200 <= 600 < 900)
    assert state.raise_to_amounts() == [(2, 900), (3, 1200)]
    state.apply_action(3)
    assert state.legal_actions() == [0, 1]
    state.apply_action(1)
    assert state.current_player() == CHANCE
    state.apply_action(4)
    assert state.is_terminal() and sum(state.returns()) == 0 and abs(state.returns()[0]) in (0, 1200)
