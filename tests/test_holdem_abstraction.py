"""Action abstraction wrapper game and pseudo-harmonic translation of off-tree bets."""
import random

import pytest

from cfrkit.cards import parse_cards
from cfrkit.games import GameError, load
from cfrkit.games.consistency import check_game
from cfrkit.games.holdem import CALL, FOLD, parse_bet_spec, pseudo_harmonic_probability, raise_action


def preflop(game_string):
    s = load(game_string).new_initial_state()
    for c in parse_cards("AsKsQhQd"):
        s.apply_action(c)
    return s


@pytest.mark.parametrize("game", [
    "holdem_abstract",
    "holdem_abstract(game=holdem(definition=holdem.nolimit.6p),bets=0.5+1:1/1:x)",
    "holdem_abstract(game=holdem(definition=holdem.limit.2p.reverse_blinds))",
    "holdem_abstract(bets=3+10,allin=false)",
    "holdem_abstract(game=holdem(definition=holdem.nolimit.3p,stacks=300;1000;150),bets=0.33+0.75+1.5)",
])
def test_consistency(game):
    assert check_game(game, num_playthroughs=150, seed=1)["terminals"] == 150


def test_preflop_sizes():
    s = preflop("holdem_abstract(bets=0.5+1)")
    # pot 150, call 50: pot after the call 200 -> 0.5 pot = 100 more than the 100 to match
    assert s.raise_targets() == [(2, 200, 0.5), (3, 300, 1.0), (4, 20000, 99.5)]
    assert s.legal_actions() == [FOLD, CALL, 2, 3, 4]
    assert s.inner_action(3) == raise_action(300)


def test_sizes_per_round_and_raise_count():
    s = preflop("holdem_abstract(bets=0.5+1:2/0.25)")
    s.apply_action(3)  # raise to 300 (one raise in the round)
    assert [t[1] for t in s.raise_targets()] == [300 + 2 * 600, 20000]  # re-raise 2 pots: pot 400 + call 200
    s.apply_action(CALL)
    for c in parse_cards("2c7d9h"):
        s.apply_action(c)
    assert [t[1] for t in s.raise_targets()] == [300 + 150, 20000]  # flop: 0.25 of the 600 pot
    assert s.game.sizes(3, 5) == (0.25,)  # last entries repeat


def test_small_sizes_dropped_and_allin_flag():
    s = preflop("holdem_abstract(bets=0.1+1)")
    assert [a for a, _, _ in s.raise_targets()] == [3, 4]  # 0.1 pot is below the minimum raise
    s = preflop("holdem_abstract(bets=1+500,allin=false)")
    assert [t[1] for t in s.raise_targets()] == [300, 20000]  # 500 pots capped at all-in, no extra all-in
    assert s.game.num_distinct_actions() == 5


def test_limit_passthrough():
    s = preflop("holdem_abstract(game=holdem(definition=holdem.limit.2p.reverse_blinds))")
    assert s.legal_actions() == [FOLD, CALL, 2] and s.inner_action(2) == 2
    assert s.game.num_distinct_actions() == 3


def test_bad_specs():
    with pytest.raises(GameError, match="is not a pot fraction"):
        load("holdem_abstract(bets=half)")
    with pytest.raises(GameError, match="must be positive"):
        parse_bet_spec("0.5+-1")
    with pytest.raises(GameError, match="wraps a holdem game"):
        load("holdem_abstract(game=kuhn)")
    assert parse_bet_spec("0.5+1:1/x") == (((0.5, 1.0), (1.0,)), ((),))


def test_pseudo_harmonic_formula():
    assert pseudo_harmonic_probability(0.5, 1.0, 0.75) == pytest.approx(3 / 7)
    assert pseudo_harmonic_probability(0.5, 1.0, 0.5) == 1.0
    assert pseudo_harmonic_probability(0.5, 1.0, 1.0) == 0.0
    # f_A(x) = (B - x)(1 + A) / ((B - A)(1 + x)) on a grid; decreasing in x
    previous = 1.0
    for i in range(1, 100):
        x = 1 + i * 0.01
        f = pseudo_harmonic_probability(1.0, 2.0, x)
        assert f == pytest.approx((2 - x) * 2 / (1 * (1 + x)))
        assert f < previous
        previous = f
    # the point where the mapping is indifferent (f = 1/2) is below the arithmetic mean
    assert pseudo_harmonic_probability(1.0, 3.0, 2.0) == pytest.approx(1 / 3)
    assert pseudo_harmonic_probability(1.0, 3.0, 5 / 3) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        pseudo_harmonic_probability(1.0, 1.0, 1.0)


def test_translate_raise():
    s = preflop("holdem_abstract(bets=0.5+1)")
    assert s.translate_raise(200) == [(2, 1.0)]
    assert s.translate_raise(300) == [(3, 1.0)]
    low = pseudo_harmonic_probability(0.5, 1.0, 0.505)
    translated = s.translate_raise(201)
    assert [a for a, _ in translated] == [2, 3]
    assert [p for _, p in translated] == pytest.approx([low, 1 - low])
    choices = s.translate_raise(250)
    assert [a for a, _ in choices] == [2, 3] and sum(p for _, p in choices) == pytest.approx(1.0)
    assert choices[0][1] == pytest.approx(3 / 7)
    assert s.translate_raise(20000) == [(4, 1.0)]
    big = s.translate_raise(5000)  # 24.5 pots between 1 pot and all-in (99.5 pots)
    assert [a for a, _ in big] == [3, 4]
    rng = random.Random(0)
    hits = sum(s.translate_action(raise_action(250), rng) == 2 for _ in range(20000))
    assert hits / 20000 == pytest.approx(3 / 7, abs=0.015)
    assert s.translate_action(raise_action(250)) == 3  # deterministic: the likelier neighbour
    assert s.translate_action(CALL) == CALL
