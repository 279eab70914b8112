"""Range kernels (strengths, showdown, fold, E[HS], equity) against numpy brute-force references."""
import itertools

import numpy as np
import pytest

import eval7
from cfrkit.cards import CARD_STRINGS, CardError, evaluate_batch, parse_cards
from cfrkit.cards.equity import (
    board_strengths,
    board_strengths_batch,
    fold_values,
    hand_strength_stats,
    hand_vs_hand_counts,
    hand_vs_hand_equity,
    hand_vs_range_equity,
    range_vs_range_equity,
    runout_boards,
    runout_masses,
    showdown_masses,
    showdown_values,
)
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_STRINGS, blocked_pairs, pair_cards, pair_index, pair_index_of

# conflict[h, o]: pairs h and o share a card
_ONEHOT = np.zeros((NUM_PAIRS, 52), dtype=np.int32)
_ONEHOT[np.arange(NUM_PAIRS), HOLE_PAIRS[:, 0]] = 1
_ONEHOT[np.arange(NUM_PAIRS), HOLE_PAIRS[:, 1]] = 1
CONFLICT = (_ONEHOT @ _ONEHOT.T) > 0


def random_board(rng, k):
    return rng.choice(52, k, replace=False).tolist()


def brute_strengths(board):
    rows = np.concatenate([HOLE_PAIRS, np.tile(np.array(board, np.uint8), (NUM_PAIRS, 1))], axis=1)
    out = np.zeros(NUM_PAIRS, dtype=np.int64)
    live = ~blocked_pairs(board)
    out[live] = evaluate_batch(rows[live])
    return out


def brute_masses(strength, opp):
    live = strength > 0
    ok = ~CONFLICT & live[None, :] & live[:, None]
    s = strength.astype(np.int64)
    win = ((s[:, None] > s[None, :]) & ok) @ opp
    lose = ((s[:, None] < s[None, :]) & ok) @ opp
    compat = ok @ opp
    return win, lose, compat


def test_pair_index_round_trip():
    seen = set()
    for i in range(NUM_PAIRS):
        a, b = pair_cards(i)
        assert a < b and pair_index(a, b) == i == pair_index(b, a)
        seen.add((a, b))
        assert pair_index_of(PAIR_STRINGS[i]) == i
    assert len(seen) == NUM_PAIRS
    assert PAIR_STRINGS[0] == "2d2c" and PAIR_STRINGS[-1] == "AsAh"
    with pytest.raises(CardError):
        pair_index(3, 3)
    with pytest.raises(CardError):
        pair_cards(1326)


def test_board_strengths_match_evaluator():
    rng = np.random.default_rng(1)
    for k in (3, 4, 5):
        board = random_board(rng, k)
        s = board_strengths(board)
        assert np.array_equal(s, brute_strengths(board))
        assert np.count_nonzero(s == 0) == NUM_PAIRS - (52 - k) * (51 - k) // 2
    boards = np.array([random_board(rng, 5) for _ in range(4)], dtype=np.uint8)
    batch = board_strengths_batch(boards)
    for b in range(4):
        assert np.array_equal(batch[b], board_strengths(boards[b].tolist()))
    with pytest.raises(CardError):
        board_strengths("AhAh2c3d4d")
    with pytest.raises(CardError):
        board_strengths("AhKh")


def test_showdown_and_fold_match_brute_force_on_random_ranges():
    rng = np.random.default_rng(2)
    for trial in range(4):
        board = random_board(rng, 5)
        s = board_strengths(board)
        opp = rng.random(NUM_PAIRS) * (rng.random(NUM_PAIRS) < 0.6)
        win, lose, compat = showdown_masses(s, opp)
        bw, bl, bc = brute_masses(s, opp)
        np.testing.assert_allclose(win, bw, atol=1e-9)
        np.testing.assert_allclose(lose, bl, atol=1e-9)
        np.testing.assert_allclose(compat, bc, atol=1e-9)
        np.testing.assert_allclose(showdown_values(s, opp), bw - bl, atol=1e-9)
        np.testing.assert_allclose(fold_values(board, opp), bc, atol=1e-9)
        # zero-sum: sum_h r1[h] * value_h(r2) = -sum_o r2[o] * value_o(r1)
        r1 = rng.random(NUM_PAIRS)
        v12 = r1 @ showdown_values(s, opp)
        v21 = opp @ showdown_values(s, r1)
        assert abs(v12 + v21) < 1e-8


def test_showdown_and_fold_batches():
    rng = np.random.default_rng(3)
    boards = np.array([random_board(rng, 5) for _ in range(3)], dtype=np.uint8)
    S = board_strengths_batch(boards)
    R = rng.random((3, NUM_PAIRS))
    V = showdown_values(S, R)
    assert V.shape == (3, NUM_PAIRS)
    for b in range(3):
        np.testing.assert_allclose(V[b], showdown_values(S[b], R[b]), atol=1e-12)
    shared = showdown_values(S[0], R)  # one board, many ranges
    for b in range(3):
        np.testing.assert_allclose(shared[b], showdown_values(S[0], R[b]), atol=1e-12)
    F = fold_values(boards[0].tolist(), R)
    for b in range(3):
        np.testing.assert_allclose(F[b], fold_values(boards[0].tolist(), R[b]), atol=1e-12)
    # preflop fold values: everything compatible
    f = fold_values([], np.ones(NUM_PAIRS))
    assert np.all(f == 1225)
    with pytest.raises(ValueError):
        showdown_values(S[0], np.ones(5))
    with pytest.raises(ValueError):
        showdown_values(S[0], -np.ones(NUM_PAIRS))


def test_river_and_turn_hand_strength_match_brute_force():
    rng = np.random.default_rng(4)
    river = random_board(rng, 5)
    opp = rng.random(NUM_PAIRS)
    st = hand_strength_stats(river, opp, num_bins=5)
    s = brute_strengths(river)
    w, l, c = brute_masses(s, opp)
    live = s > 0
    hs = np.where(live, (w + 0.5 * (c - w - l)) / np.where(c > 0, c, 1), 0)
    np.testing.assert_allclose(st.ehs, hs, atol=1e-12)
    np.testing.assert_allclose(st.ehs2, hs ** 2, atol=1e-12)
    np.testing.assert_allclose(st.histogram.sum(1), live.astype(float))
    turn = river[:4]
    st4 = hand_strength_stats(turn, num_bins=10)
    acc = np.zeros(NUM_PAIRS)
    acc2 = np.zeros(NUM_PAIRS)
    n = np.zeros(NUM_PAIRS)
    ones = np.ones(NUM_PAIRS)
    for r in set(range(52)) - set(turn):
        s = brute_strengths(turn + [r])
        w, l, c = brute_masses(s, ones)
        live = s > 0
        h = np.where(live, (w + 0.5 * (c - w - l)) / np.where(c > 0, c, 1), 0)
        acc += h
        acc2 += h * h
        n += live
    live4 = n > 0
    assert np.array_equal(st4.runouts, n.astype(np.int64)) and set(n[live4]) == {46}
    np.testing.assert_allclose(st4.ehs[live4], acc[live4] / n[live4], atol=1e-12)
    np.testing.assert_allclose(st4.ehs2[live4], acc2[live4] / n[live4], atol=1e-12)
    # histogram rows are distributions whose bin means bracket E[HS]
    assert np.allclose(st4.histogram[live4].sum(1), 1.0)
    centers = (np.arange(10) + 0.5) / 10
    assert np.all(np.abs(st4.histogram[live4] @ centers - st4.ehs[live4]) <= 0.05 + 1e-12)


def test_flop_ehs_is_the_average_of_turn_ehs():
    rng = np.random.default_rng(5)
    flop = random_board(rng, 3)
    st = hand_strength_stats(flop)
    h = pair_index(*sorted(set(range(52)) - set(flop))[:2])
    a, b = pair_cards(h)
    turns = [t for t in range(52) if t not in flop and t not in (a, b)]
    per_turn = [hand_strength_stats(flop + [t]).ehs[h] for t in turns]
    assert st.runouts[h] == 1081
    assert abs(st.ehs[h] - np.mean(per_turn)) < 1e-12
    assert 0.0 <= st.ehs.min() and st.ehs.max() <= 1.0


def eval7_exact(hand1, hand2):
    E7 = [eval7.Card(s) for s in CARD_STRINGS]
    a = [E7[c] for c in parse_cards(hand1)]
    b = [E7[c] for c in parse_cards(hand2)]
    dead = set(parse_cards(hand1 + hand2))
    rest = [E7[c] for c in range(52) if c not in dead]
    ev = eval7.evaluate
    w = t = n = 0
    for board in itertools.combinations(rest, 5):
        bl = list(board)
        x, y = ev(a + bl), ev(b + bl)
        w += x > y
        t += x == y
        n += 1
    return (w + 0.5 * t) / n


@pytest.mark.parametrize(
    "hand1, hand2, published",
    [
        ("AhAs", "KdKc", 0.82),   # AA vs KK, about 82%
        ("AhKh", "QsQd", 0.46),   # AKs vs QQ, about 46%
        ("AsKd", "2c2h", 0.47),   # AKo vs 22, the "coin flip", about 47%
    ],
)
def test_preflop_matchups_exact(hand1, hand2, published):
    eq, w, t, l = hand_vs_hand_equity(hand1, hand2)
    assert w + t + l == 1712304
    assert abs(eq - eval7_exact(hand1, hand2)) < 1e-12  # exact enumeration, independent evaluator
    assert abs(eq - published) < 0.01
    eq2, *_ = hand_vs_hand_equity(hand2, hand1)
    assert abs(eq + eq2 - 1) < 1e-12


def test_range_equities_match_pairwise_exact():
    flop = parse_cards("2c7dKh")
    r1_hands = ["AhKd", "QcQd", "9s8s"]
    r2_hands = ["JsTs", "7c7h", "AdQd"]
    w1 = np.array([1.0, 0.5, 2.0])
    w2 = np.array([0.3, 1.0, 1.5])
    r1 = np.zeros(NUM_PAIRS)
    r2 = np.zeros(NUM_PAIRS)
    r1[[pair_index_of(h) for h in r1_hands]] = w1
    r2[[pair_index_of(h) for h in r2_hands]] = w2
    num = den = 0.0
    for h, a in zip(r1_hands, w1):
        for o, b in zip(r2_hands, w2):
            if set(parse_cards(h)) & set(parse_cards(o)):
                continue
            eq, w, t, l = hand_vs_hand_equity(h, o, flop)
            num += a * b * (w + 0.5 * t)
            den += a * b * (w + t + l)
    eq, per_hand = range_vs_range_equity(r1, r2, flop)
    assert abs(eq - num / den) < 1e-12
    e_h = hand_vs_range_equity("AhKd", r2, flop)
    assert abs(per_hand[pair_index_of("AhKd")] - e_h) < 1e-12
    # preflop is sampled: close to the exact value
    r1 = np.zeros(NUM_PAIRS)
    r2 = np.zeros(NUM_PAIRS)
    r1[pair_index_of("AhAs")] = 1
    r2[pair_index_of("KdKc")] = 1
    eq_mc, _ = range_vs_range_equity(r1, r2, (), num_samples=40000, seed=0)
    assert abs(eq_mc - hand_vs_hand_equity("AhAs", "KdKc")[0]) < 0.01
    with pytest.raises(CardError):
        hand_vs_hand_equity("AhAs", "AhKd")
    with pytest.raises(CardError):
        hand_vs_range_equity("AhKd", r2, "Ah2c3c")


def test_runout_masses_sum_brute_force_masses_over_boards():
    rng = np.random.default_rng(5)
    boards = runout_boards(random_board(rng, 4))[:6]
    opp = rng.random(NUM_PAIRS) * (rng.random(NUM_PAIRS) < 0.7)
    win, tie, compat = runout_masses(boards, opp)
    bw = bt = bc = 0.0
    for b in boards:
        w, l, c = brute_masses(brute_strengths(b.tolist()), opp)
        bw, bt, bc = bw + w, bt + (c - w - l), bc + c
    np.testing.assert_allclose(win, bw, atol=1e-9)
    np.testing.assert_allclose(tie, bt, atol=1e-9)
    np.testing.assert_allclose(compat, bc, atol=1e-9)
    with pytest.raises(CardError):
        runout_masses(boards[:, :4], opp)          # not complete boards
    with pytest.raises(CardError):
        runout_masses(np.array([[0, 0, 1, 2, 3]]), opp)


def test_hand_vs_hand_counts_on_card_ids():
    h1, h2, flop = parse_cards("AhKd"), parse_cards("QcQd"), parse_cards("2c7dKh")
    _, w, t, l = hand_vs_hand_equity("AhKd", "QcQd", "2c7dKh")
    assert hand_vs_hand_counts(h1, h2, flop) == (w, t, l)
    assert w + t + l == 990                        # C(45, 2) turn-river completions
    assert hand_vs_hand_counts(h2, h1, tuple(flop)) == (l, t, w)
    with pytest.raises(CardError):
        hand_vs_hand_counts(h1, h2, flop + [h1[0]])  # a card twice
    with pytest.raises(CardError):
        hand_vs_hand_counts(h1, (52, 3), flop)


def test_board_strengths_without_the_hash_table_match_it():
    """A few boards are evaluated with the reference evaluator before the equity kernel's hash table exists (a
    river solve never builds it, issue 30 part 12); the classes equal the hash table's on 3, 4 and 5 cards, and
    importing builds nothing.  Fresh process: the module's table state is per process."""
    code = ("import numpy as np\n"
            "from cfrkit._kernels import equity as E\n"
            "from cfrkit.cards.equity import board_strengths, board_strengths_batch\n"
            "assert not E.hash_table_built()\n"
            "rng = np.random.default_rng(7)\n"
            "sets = [np.array([rng.permutation(52)[:k] for _ in range(E.MASK_EVAL_MAX_BOARDS)], dtype=np.uint8)\n"
            "        for k in (3, 4, 5) for _ in range(6)]\n"
            "river = board_strengths('AsJd8h5c2d')\n"
            "by_mask = [board_strengths_batch(b) for b in sets]\n"
            "assert not E.hash_table_built()\n"
            "board_strengths_batch(np.vstack(sets[-2:]))\n"   # more boards than the limit: builds the table
            "assert E.hash_table_built()\n"
            "assert (board_strengths('AsJd8h5c2d') == river).all() and (river > 0).sum() == 1081\n"
            "for b, m in zip(sets, by_mask):\n"
            "    assert (board_strengths_batch(b) == m).all()\n")
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", code], check=True)
