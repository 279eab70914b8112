"""Suit-isomorphism hand indexer: exact counts, exhaustive checks on preflop and flop, round trips."""
import itertools

import numpy as np
import pytest

from cfrkit.cards import CardError, parse_cards
from cfrkit.cards.isomorphism import HandIndexer, holdem_indexer, preflop_class_name


def permute_suits(hands, perm):
    return (hands & ~np.uint8(3)) | np.asarray(perm, dtype=np.uint8)[hands & 3]


def test_canonical_counts():
    ix = holdem_indexer()
    assert [ix.size(r) for r in range(4)] == [169, 1286792, 55190538, 2428287420]
    assert [ix.cards_in_round(r) for r in range(4)] == [2, 5, 6, 7]


def test_preflop_classes_exhaustive():
    ix = holdem_indexer()
    pairs = np.array(list(itertools.combinations(range(52), 2)), dtype=np.uint8)
    idx = ix.index_batch(pairs)
    counts = np.bincount(idx, minlength=169)
    # 13 pairs x 6 combos, 78 suited x 4, 78 offsuit x 12
    assert sorted(counts.tolist()) == sorted([6] * 13 + [4] * 78 + [12] * 78)
    names = [preflop_class_name(i) for i in range(169)]
    assert len(set(names)) == 169 and "AA" in names and "AKs" in names and "72o" in names
    for i in range(169):
        members = pairs[idx == i]
        kinds = {preflop_class_name(ix.index(m.tolist())) for m in members}
        assert kinds == {names[i]}
    assert ix.index("AhKh") == ix.index("KsAs") != ix.index("AhKs")
    from cfrkit.cards.hands import pair_index_of
    from cfrkit.cards.isomorphism import pair_preflop_classes

    classes = pair_preflop_classes()
    assert classes.shape == (1326,) and np.bincount(classes).sum() == 1326
    assert preflop_class_name(classes[pair_index_of("AhAs")]) == "AA"
    assert preflop_class_name(classes[pair_index_of("7c2d")]) == "72o"


def test_flop_exhaustive():
    """All 25,989,600 (hole, flop) hands hit every one of the 1,286,792 indices, and every index
    round-trips, so the index is exactly the set of isomorphism classes."""
    ix = holdem_indexer()
    five = np.array(list(itertools.combinations(range(52), 5)), dtype=np.uint8)
    seen = np.zeros(ix.size(1), dtype=bool)
    total = 0
    for hole in itertools.combinations(range(5), 2):
        board = [c for c in range(5) if c not in hole]
        hands = np.ascontiguousarray(five[:, list(hole) + board])
        idx = ix.index_batch(hands)
        assert idx.min() >= 0 and idx.max() < ix.size(1)
        seen[idx] = True
        total += len(idx)
    assert total == 1326 * 19600 and seen.all()
    all_idx = np.arange(ix.size(1))
    reps = ix.unindex_batch(all_idx, 1)
    assert np.array_equal(ix.index_batch(reps), all_idx)


@pytest.mark.parametrize("round_", [1, 2, 3])
def test_random_round_trips_and_invariance(round_):
    ix = holdem_indexer()
    rng = np.random.default_rng(round_)
    k = ix.cards_in_round(round_)
    hands = np.argsort(rng.random((100_000, 52)), axis=1)[:, :k].astype(np.uint8)
    idx = ix.index_batch(hands)
    assert idx.min() >= 0 and idx.max() < ix.size(round_)
    reps = ix.unindex_batch(idx, round_)
    assert np.array_equal(ix.index_batch(reps), idx)
    # suit relabelling and reordering cards inside a round keep the index
    for _ in range(3):
        perm = rng.permutation(4)
        assert np.array_equal(ix.index_batch(permute_suits(hands, perm)), idx)
    shuffled = hands.copy()
    shuffled[:, :2] = shuffled[:, [1, 0]]
    shuffled[:, 2:5] = shuffled[:, [4, 2, 3]]
    assert np.array_equal(ix.index_batch(shuffled), idx)
    # moving a card to another round changes the class: representative keeps the rounds apart
    rand_idx = rng.integers(0, ix.size(round_), 50_000)
    assert np.array_equal(ix.index_batch(ix.unindex_batch(rand_idx, round_)), rand_idx)
    # the representative is isomorphic: same multiset of per-round rank patterns under some perm
    for h, rep in zip(hands[:300], reps[:300]):
        ok = False
        for perm in itertools.permutations(range(4)):
            p = permute_suits(h[None, :], perm)[0]
            if all(
                sorted(p[a:b]) == sorted(rep[a:b])
                for a, b in [(0, 2), (2, 5), (5, 6), (6, 7)][: round_ + 1]
            ):
                ok = True
                break
        assert ok


def test_board_card_is_not_hole_card():
    ix = holdem_indexer()
    assert ix.index(parse_cards("AhKh2c3c4c")) != ix.index(parse_cards("2c3cAhKh4c"))


def test_other_round_structures_and_errors():
    ix = HandIndexer((1, 1))  # e.g. one private and one public card from a full deck
    assert ix.size(0) == 13
    assert ix.size(1) == 13 * 13 + 13 * 12  # other suit: any rank; same suit: another rank
    with pytest.raises(CardError, match="do not end a round"):
        holdem_indexer().index("AhKhQh")
    with pytest.raises(CardError, match="duplicate"):
        holdem_indexer().index("AhAh")
    with pytest.raises(ValueError):
        holdem_indexer().unindex(169, 0)
    with pytest.raises(ValueError):
        HandIndexer((2, 3, 1, 1, 1))


def test_board_only_counts_and_canonical_boards():
    from math import comb

    from cfrkit.cards.isomorphism import canonical_boards

    assert HandIndexer((3, 1, 1)).size(0) == 1755
    assert HandIndexer((4,)).size(0) == 16432
    assert HandIndexer((5,)).size(0) == 134459
    assert HandIndexer((2, 5)).size(1) == 123156254  # hole cards + the board as one set
    for k, m in ((3, 1755), (4, 16432)):
        reps, counts = canonical_boards(k)
        assert reps.shape == (m, k) and counts.sum() == comb(52, k) and counts.min() >= 1
        # orbit sizes divide 24 (the suit permutations)
        assert set(np.unique(24 % counts)) == {0}
