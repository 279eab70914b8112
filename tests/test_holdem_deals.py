import numpy as np
import pytest

from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.deals import deal_for_hand, deal_state


def test_deals_are_reproducible_distinct_and_uniform():
    game = load("holdem")
    counts = np.zeros(52)
    for i in range(3000):
        cards = deal_for_hand(game, 7, i)
        assert cards == deal_for_hand(game, 7, i)
        assert len(cards) == 9 and len(set(cards)) == 9
        counts[cards] += 1
    assert deal_for_hand(game, 7, 0) != deal_for_hand(game, 8, 0)
    # each card appears 9/52 of the time: a chi-square bound far from what a biased deal gives
    expected = 3000 * 9 / 52
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 100, chi2


def test_deal_state_deals_hole_cards_then_board_follows():
    game = load("holdem")
    state, cards = deal_state(game, 1, 2)
    assert state.hole == [cards[0:2], cards[2:4]]
    assert not state.is_chance_node()
    with pytest.raises(GameError):
        deal_for_hand(game, -1, 0)


@pytest.mark.parametrize("spec", ["holdem", "holdem(definition=holdem.nolimit.6p)",
                                  "holdem(definition=leduc.limit.2p)"])
def test_deals_are_the_documented_permutation_of_the_deck(spec):
    """Hand ``i``'s cards are the first cards of ``default_rng(SeedSequence([seed, i])).permutation(deck)`` (the
    deck's array is kept per deck shape; a match replays the same deals whatever ran before), as Python ints."""
    game = load(spec)
    d = game.definition
    needed = d.num_players * d.num_hole_cards + d.total_board_cards(d.num_rounds)
    for seed, i in [(0, 0), (7, 3), (12345, 999), (2 ** 40, 17)]:
        rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
        want = [int(c) for c in rng.permutation(np.asarray(d.deck(), dtype=np.int64))[:needed]]
        got = deal_for_hand(game, seed, i)
        assert got == want and all(type(c) is int for c in got)
    assert deal_for_hand(load("holdem"), 3, 1) != deal_for_hand(load("holdem(definition=leduc.limit.2p)"), 3, 1)
