"""Card encoding and the hand evaluator, checked against eval7 (an independent implementation)."""
import itertools

import numpy as np
import pytest

import eval7
from cfrkit.cards import (
    CARD_STRINGS,
    CATEGORY_NAMES,
    CardError,
    card_to_string,
    category_name,
    evaluate,
    evaluate_batch,
    hand_category,
    parse_card,
    parse_cards,
)
from cfrkit.cards.evaluator import five_card_classes_all, seven_card_class_counts

E7 = [eval7.Card(s) for s in CARD_STRINGS]


def eval7_values(hands):
    ev = eval7.evaluate
    return np.array([ev([E7[c] for c in h]) for h in hands.tolist()], dtype=np.int64)


def assert_same_order(ours, theirs):
    """Two rankings are equivalent iff every class of ours maps to one value of theirs, increasingly."""
    order = np.lexsort((theirs, ours))
    o, t = ours[order], theirs[order]
    same = np.diff(o) == 0
    assert np.all(np.diff(t)[same] == 0), "hands tied by cfrkit differ in eval7"
    assert np.all(np.diff(t)[~same] > 0), "cfrkit orders hands differently from eval7"


def test_card_ids_follow_acpc_order():
    assert parse_card("2c") == 0 and parse_card("2d") == 1 and parse_card("2h") == 2
    assert parse_card("2s") == 3 and parse_card("Ah") == 50 and parse_card("As") == 51
    assert parse_cards("AhKs") == [50, 47]
    assert parse_cards("Ah Ks, 2c") == [50, 47, 0]
    assert parse_cards("10h") == [parse_card("Th")]
    for c in range(52):
        assert parse_card(card_to_string(c)) == c
    assert parse_cards("") == []


@pytest.mark.parametrize("bad", ["Xh", "Ax", "A", "AhK", "1c", "Ahh", "ZZ"])
def test_bad_card_strings_raise_clear_errors(bad):
    with pytest.raises(CardError, match="card"):
        parse_cards(bad)


def test_duplicates_and_bad_ids():
    with pytest.raises(CardError, match="duplicate card Ah"):
        parse_cards("AhKsAh")
    with pytest.raises(CardError):
        card_to_string(52)
    with pytest.raises(CardError):
        card_to_string(-1)
    assert issubclass(CardError, ValueError)
    with pytest.raises(CardError, match="5, 6 or 7"):
        evaluate("AhKs")
    with pytest.raises(CardError, match="duplicate"):
        evaluate([0, 1, 2, 3, 0])
    with pytest.raises(CardError, match="row 1"):
        evaluate_batch(np.array([[0, 1, 2, 3, 4], [0, 1, 2, 3, 3]], dtype=np.uint8))
    with pytest.raises(CardError, match="row 0"):
        evaluate_batch(np.array([[0, 1, 2, 3, 52]], dtype=np.uint8))
    with pytest.raises(CardError, match="shape"):
        evaluate_batch(np.zeros((3, 4), dtype=np.uint8))
    with pytest.raises(CardError, match="integers"):
        evaluate_batch(np.zeros((3, 5), dtype=np.float64))
    with pytest.raises(CardError, match="0..51"):
        evaluate_batch(np.array([[0, 1, 2, 3, -4]]))
    assert evaluate_batch(np.array([[50, 46, 42, 38, 34]], dtype=np.int64)).tolist() == [7462]


def test_known_hands():
    assert evaluate("AhKhQhJhTh") == 7462
    assert evaluate("7c5d4h3s2c") == 1
    assert category_name(evaluate("Ah2c3d4s5h")) == "straight"
    assert evaluate("Ah2c3d4s5h") < evaluate("6h2c3d4s5h")
    assert category_name(evaluate("AhAsAdAc2c")) == "four of a kind"
    assert category_name(evaluate("2h3h4h5h7h")) == "flush"
    assert evaluate("AhAsKdKc2c") > evaluate("AhAsQdQcKc")
    # best 5 of 7: a flush beats the straight also present
    assert category_name(evaluate("9h8h7h6d5h2h3c")) == "flush"
    assert category_name(evaluate("9h8h7h6h5h2h3c")) == "straight flush"
    # three pairs: the best two plus the best kicker
    assert evaluate("AhAsKdKcQdQc2c") == evaluate("AhAsKdKcQd3c2c")
    assert hand_category(np.array([1, 1277, 1278, 7462])).tolist() == [0, 0, 1, 8]
    assert len(CATEGORY_NAMES) == 9
    with pytest.raises(ValueError):
        hand_category(0)


def test_all_five_card_hands_match_eval7():
    ours = five_card_classes_all()
    assert ours.shape == (2598960,)
    assert np.unique(ours).size == 7462 and ours.min() == 1 and ours.max() == 7462
    hands = np.array(list(itertools.combinations(range(52), 5)), dtype=np.uint8)
    assert np.array_equal(evaluate_batch(hands), ours)
    assert_same_order(ours, eval7_values(hands))
    cats = np.bincount(hand_category(ours), minlength=9)
    assert cats.tolist() == [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 40]


def test_random_seven_and_six_card_hands_match_eval7():
    rng = np.random.default_rng(12345)
    hands = np.argsort(rng.random((1_000_000, 52)), axis=1)[:, :7].astype(np.uint8)
    ours = evaluate_batch(hands)
    assert_same_order(ours, eval7_values(hands))
    six = hands[:200_000, :6].copy()
    assert_same_order(evaluate_batch(six), eval7_values(six))
    # single-hand API agrees with the batch
    for row in hands[:200]:
        assert evaluate(row.tolist()) == ours[np.flatnonzero((hands[:200] == row).all(1))[0]]


def test_seven_card_category_counts_equal_standard_table():
    counts = seven_card_class_counts()
    assert counts.sum() == 133784560 and counts[0] == 0
    by_cat = np.bincount(hand_category(np.arange(1, 7463)), weights=counts[1:], minlength=9)
    assert by_cat.astype(np.int64).tolist() == [
        23294460, 58627800, 31433400, 6461620, 6180020, 4047644, 3473184, 224848, 41584,
    ]
    # 4824 classes are reachable as the best hand of 7 cards
    assert np.count_nonzero(counts) == 4824


@pytest.mark.parametrize("k", [5, 6, 7])
def test_fast_and_reference_evaluators_agree_on_every_hand(k):
    """The batch kernels use a keyed perfect-hash evaluator built from the bit-mask reference;
    they must agree on all C(52, k) hands (133,784,560 for k = 7)."""
    from cfrkit._kernels import handeval

    assert handeval.count_evaluator_mismatches(k) == 0


def test_fast_evaluator_against_phevaluator_directly():
    """The batch (perfect-hash) kernel against phevaluator, a third implementation sharing nothing with
    cfrkit's bit-mask reference or eval7 (issue 17: the fast-vs-reference test compared two tables
    built from the same reference).  Hands are chosen where evaluators go wrong: wheels (A-2-3-4-5),
    broadway, straight flushes, flushes beside straights, boards with two flushes' worth of one suit."""
    phe = pytest.importorskip("phevaluator")
    rng = np.random.default_rng(17)
    tricky = [parse_cards(s) for s in ("AsKsQsJsTs", "As2s3s4s5s", "5h4h3h2hAh", "AcKdQhJsTc", "Ac2d3h4s5c",
                                       "6c2d3h4s5c")]
    special = [c for h in tricky for c in h]
    deck = sorted(set(special))[:13]
    hands = [list(h) for h in itertools.combinations(deck, 7)]
    for _ in range(20_000):  # five or more cards of one suit plus random cards
        suit = int(rng.integers(4))
        suited = rng.choice(np.arange(suit, 52, 4), size=int(rng.integers(5, 8)), replace=False).tolist()
        rest = [c for c in rng.permutation(52).tolist() if c not in suited][: 7 - len(suited)]
        hands.append(suited + rest)
    for _ in range(20_000):
        hands.append(rng.permutation(52)[:7].tolist())
    hands = np.array(hands, dtype=np.uint8)
    ours = evaluate_batch(hands)
    theirs = np.array([-phe.evaluate_cards(*[CARD_STRINGS[c] for c in h]) for h in hands.tolist()], dtype=np.int64)
    assert_same_order(ours, theirs)
    six = hands[:, :6].copy()
    theirs6 = np.array([-phe.evaluate_cards(*[CARD_STRINGS[c] for c in h]) for h in six[:10_000].tolist()])
    assert_same_order(evaluate_batch(six[:10_000]), theirs6)
