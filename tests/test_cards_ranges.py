import numpy as np
import pytest

from cfrkit.cards import parse_cards
from cfrkit.cards.hands import HOLE_PAIRS, PAIR_STRINGS
from cfrkit.cards.ranges import CLASS_LABELS, PAIR_CLASSES, Range, RangeError, parse_range, range_vector

eval7 = pytest.importorskip("eval7")


@pytest.mark.parametrize("text", ["22+", "A2s+,KTo+,QJ", "TT+,AQs+,AKo", "QQ-99,A5s-A2s,K9o-K6o", "AhKh,7c7d,AK"])
def test_combos_match_eval7(text):
    """eval7's independent range parser names the same combos."""
    ours = parse_range(text)
    theirs = set()
    for (c1, c2), weight in eval7.HandRange(text).hands:
        assert weight == 1.0
        theirs.add(frozenset((str(c1), str(c2))))
    mine = {frozenset((PAIR_STRINGS[i][:2], PAIR_STRINGS[i][2:])) for i in np.flatnonzero(ours.weights)}
    assert mine == theirs
    assert ours.num_combos == len(theirs)


def test_weights_single_combos_and_overrides():
    r = parse_range("QQ+,AKs,KQs:0.5,AhKh:0")
    # 18 pair combos + 3 AKs (AhKh removed) + 4 * 0.5 KQs
    assert r.num_combos == pytest.approx(18 + 3 + 2)
    assert r.weights[PAIR_STRINGS.index("AhKh")] == 0.0
    connectors = parse_range("76s-54s")
    assert connectors.num_combos == 12 and set(connectors.class_weights()) == {"76s", "65s", "54s"}


def test_class_labels_and_counts():
    assert len(CLASS_LABELS) == 169 and len(set(PAIR_CLASSES)) == 169
    counts = {label: PAIR_CLASSES.count(label) for label in ("AA", "AKs", "AKo", "72o")}
    assert counts == {"AA": 6, "AKs": 4, "AKo": 12, "72o": 12}


def test_round_trip_of_random_ranges():
    rng = np.random.default_rng(0)
    for _ in range(30):
        w = np.zeros(1326)
        labels = rng.choice(CLASS_LABELS, size=rng.integers(1, 60), replace=False)
        for label in labels:
            w[[i for i, c in enumerate(PAIR_CLASSES) if c == label]] = rng.choice([1.0, 0.5, 0.25])
        singles = rng.integers(0, 1326, size=5)
        w[singles] = rng.choice([0.0, 1.0, 0.75], size=5)
        r = Range(w)
        assert parse_range(r.to_string()) == r


def test_card_removal_against_board():
    board = parse_cards("AsKd2c")
    w = range_vector("AA,KK,22,AKs", board)
    held = {PAIR_STRINGS[i] for i in np.flatnonzero(w)}
    assert all(not set(parse_cards(h)) & set(board) for h in held)
    # AA: 3 of 6 left; KK 3; 22 3; AKs: AhKh, AcKc (AsKs, AdKd blocked)
    assert len(held) == 3 + 3 + 3 + 2


@pytest.mark.parametrize("bad", ["AKx", "AK:2", "AK:nan", "A", "QQ-AKs", "AhAh", "ZZ", "76s-A2s", "AKs:",
                                 "AA+s", "A\u0665s"])
def test_bad_tokens_raise_range_error(bad):
    with pytest.raises(RangeError):
        parse_range(bad)


def test_bad_vectors_raise():
    with pytest.raises(RangeError):
        Range(np.ones(10))
    with pytest.raises(RangeError):
        Range(np.full(1326, np.nan))
    assert HOLE_PAIRS.shape == (1326, 2)
