"""The exact preflop equity table (issue 27) and the one-hand-against-a-range equity engine LBR uses."""
import os

import numpy as np
import pytest

from cfrkit.cards import parse_cards
from cfrkit.cards.equity import hand_vs_hand_equity, range_vs_range_equity
from cfrkit.cards.hands import HOLE_PAIRS, pair_index_of
from cfrkit.cards.preflop import (BOARDS, MATCHUP_FILE, TABLE_FILE, _matchup_keys, cache_dir, canonical_matchups,
                                  preflop_equity_table, table_from_matchup_counts)
from cfrkit.cards.range_equity import RangeEquity

CACHED = os.path.exists(os.path.join(cache_dir(), TABLE_FILE)) or os.path.exists(MATCHUP_FILE)


def test_canonical_matchups_are_the_suit_classes():
    reps = canonical_matchups()
    assert len(reps) == 47008  # classes of (pair, pair) up to suit permutation and order
    assert len({tuple(r) for r in reps}) == len(reps)
    assert (reps[:, 0] < reps[:, 1]).all() and (reps[:, 2] < reps[:, 3]).all()
    # read off the 169 class representatives' rows: every key of the full 1326 x 1326 table, in its order
    key, _ = _matchup_keys()
    uniq = np.unique(key[key >= 0])
    assert np.array_equal(reps, np.stack([uniq // 2704 // 52, uniq // 2704 % 52, uniq % 2704 // 52,
                                          uniq % 2704 % 52], axis=1))
    rows = np.array([0, 77, 1325])
    assert all(np.array_equal(a, b[rows]) for a, b in zip(_matchup_keys(rows), (key, _matchup_keys()[1])))


def test_each_matchup_has_its_class_representatives_exact_equity():
    """Suit isomorphism: a random matchup's equity (exact enumeration) is its canonical matchup's, flipped
    when the canonical form lists the other pair first."""
    key, flipped = _matchup_keys()
    gen = np.random.default_rng(1)
    for _ in range(10):
        while True:
            h, j = gen.integers(0, 1326, 2)
            if key[h, j] >= 0:
                break
        k = int(key[h, j])
        a, b, c, d = k // 2704 // 52, k // 2704 % 52, k % 2704 // 52, k % 2704 % 52
        rep = hand_vs_hand_equity([a, b], [c, d])[0]
        direct = hand_vs_hand_equity(list(HOLE_PAIRS[h]), list(HOLE_PAIRS[j]))[0]
        assert direct == pytest.approx(1 - rep if flipped[h, j] else rep, abs=1e-12)
    assert key[pair_index_of("AsAh"), pair_index_of("AsKd")] == -1  # a shared card: no matchup


def test_shipped_matchup_counts_are_exact_enumerations():
    """The shipped counts (what the table is expanded from on a new machine) equal a fresh enumeration of
    2 * wins + ties over all boards, on sampled canonical matchups, and expand to a table that agrees."""
    from cfrkit._kernels import equity as kernel

    counts = np.load(MATCHUP_FILE)
    matchups = canonical_matchups()
    assert counts.shape == (len(matchups),) == (47008,)
    rng = np.random.default_rng(7)
    sample = np.r_[0, len(matchups) - 1, rng.choice(len(matchups), 6, replace=False)]
    empty = np.zeros(0, dtype=np.uint8)
    for i in sample:
        a, b, c, d = (int(x) for x in matchups[i])
        w, t, lose = kernel.hand_vs_hand_counts(a, b, c, d, empty)
        assert w + t + lose == BOARDS
        assert counts[i] == 2 * w + t, (i, matchups[i])
    table = table_from_matchup_counts(counts)
    i, j = pair_index_of("AsAh"), pair_index_of("KdKc")
    assert table[i, j] == pytest.approx(hand_vs_hand_equity("AsAh", "KdKc")[0], abs=1e-6)
    with pytest.raises(ValueError):
        table_from_matchup_counts(counts[:-1])


@pytest.mark.slow
@pytest.mark.skipif(not (CACHED or os.environ.get("CFRKIT_LONG")),
                    reason="the table is not cached here (building it takes minutes): set CFRKIT_LONG=1")
def test_table_against_exact_and_sampled_boards():
    table = preflop_equity_table()
    assert table.shape == (1326, 1326) and table.dtype == np.float32
    i, j = pair_index_of("AsAh"), pair_index_of("KdKc")
    assert table[i, j] == pytest.approx(hand_vs_hand_equity("AsAh", "KdKc")[0], abs=1e-6)  # about 0.82
    compat = table + table.T  # E[h, j] + E[j, h] = 1 wherever the pairs share no card
    mask = _matchup_keys()[0] >= 0
    assert np.allclose(compat[mask], 1.0, atol=1e-6) and (table[~mask] == 0).all()
    # a range: the table's equity against sampled boards (20,000), within 4 standard errors
    gen = np.random.default_rng(2)
    w = gen.random(1326) ** 4
    engine = RangeEquity()
    for hand in ("7c6c", "AhKd", "2d2c"):
        h = pair_index_of(hand)
        exact, err = engine.equity(h, w)
        assert err == 0.0
        one = np.zeros(1326)
        one[h] = 1.0
        sampled, per_hand = range_vs_range_equity(one, w, num_samples=20000, seed=3)
        assert abs(exact - sampled) < 4 * 0.5 / np.sqrt(20000)


@pytest.mark.parametrize("board", ["AsJd8h", "AsJd8h5c", "AsJd8h5c2d"])
def test_range_equity_after_the_flop_is_the_exact_kernel(board):
    gen = np.random.default_rng(5)
    w = gen.random(1326)
    engine = RangeEquity()
    cards = parse_cards(board)
    for hand in ("KhQh", "7c6c", "AcAd"):
        want, _ = range_vs_range_equity(np.eye(1326)[pair_index_of(hand)], w, cards)
        got, err = engine.equity(pair_index_of(hand), w, cards)
        assert got == pytest.approx(want, abs=1e-12) and err == 0.0
    # sampled flop runouts: within 4 of their own standard errors of the exact value
    if len(cards) == 3:
        exact, _ = engine.equity(pair_index_of("KhQh"), w, cards)
        got, err = RangeEquity(flop_samples=300).equity(pair_index_of("KhQh"), w, cards, seed=9)
        assert 0 < err < 0.05 and abs(got - exact) < 4 * err


def test_range_equity_bad_input():
    engine = RangeEquity()
    with pytest.raises(ValueError, match="shares a card"):
        engine.equity(pair_index_of("AsKs"), np.ones(1326), parse_cards("AsJd8h"))
    with pytest.raises(ValueError, match="board of 0, 3, 4 or 5"):
        engine.equity(0, np.ones(1326), parse_cards("AsJd"))
    with pytest.raises(ValueError, match="shape"):
        engine.equity(0, np.ones(10), parse_cards("AsJd8h"))
    assert np.isnan(engine.equity(pair_index_of("AsKs"), np.eye(1326)[pair_index_of("AsAh")], parse_cards("2c3d4h"))[0])
