"""The kernels of the street lookahead's per-board work (issue 27, match speed part 5) against the Python paths
they replace, bit for bit: A^R's features of one pair on many boards (``range_equity.pair_features_boards``,
rank classes instead of all 1326 pairs on every next board), the hand-against-hand equities of a chance node's
boards (``equity.hand_vs_hand_boards``) and the value function's board equities read through them."""
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import cfrkit.agents.blueprint_values as bv
from cfrkit._kernels import equity as equity_kernel
from cfrkit._kernels import range_equity
from cfrkit.agents import rule_based as rb
from cfrkit.cards.equity import hand_vs_hand_counts
from cfrkit.cards.hands import pair_index


def _suited_board(rng, n: int, suit_cards: int):
    """``n`` distinct cards of which ``suit_cards`` share one suit (flush boards: the flush pairs' branch)."""
    suit = int(rng.integers(4))
    same = [4 * int(r) + suit for r in rng.choice(13, suit_cards, replace=False)]
    others = [c for c in range(52) if c & 3 != suit]
    return same + [int(c) for c in rng.choice(others, n - suit_cards, replace=False)]


def _boards(rng, n: int):
    """Random boards of ``n`` cards and boards with 3, 4 (and 5) cards of a suit."""
    out = [[int(c) for c in rng.choice(52, n, replace=False)] for _ in range(25)]
    for k in range(3, n + 1):
        out += [_suited_board(rng, n, k) for _ in range(6)]
    return out


@pytest.mark.parametrize("n", [3, 4, 5])
def test_pair_features_on_boards_equal_board_features(n):
    """``pair_features_on_boards`` equals the numpy reference ``BoardFeatures(board, [pair], compiled=False)`` (and
    the compiled row path) on every board: the pair's own hand, a pair touching the board, a pair whose cards are
    among the next cards sampled."""
    rng = np.random.default_rng(40 + n)
    boards = _boards(rng, n)
    checked = 0
    for trial in range(4):
        # the pair: off all boards (the usual case), or a random pair that touches some boards
        if trial == 0:
            pair = pair_index(*[int(c) for c in rng.choice(52, 2, replace=False)])
            use = boards
        else:
            cards = [int(c) for c in rng.choice(52, 2, replace=False)]
            pair = pair_index(*cards)
            use = [b for b in boards if not set(b) & set(cards)][:12] + [b for b in boards if set(b) & set(cards)][:4]
        hs, ehs, outs, wet = rb.pair_features_on_boards(use, pair)
        for k, bd in enumerate(use):
            key = tuple(sorted(bd))
            ref = rb.BoardFeatures(key, np.array([pair]), compiled=False)
            fast = rb.BoardFeatures(key, np.array([pair]))
            for f in (ref, fast):  # fast: one row, so the rank-class kernel too
                assert hs[k] == f.hs[0] and ehs[k] == f.ehs[0] and outs[k] == f.outs[0], (key, pair, hs[k], f.hs[0])
                assert wet[k] == f.wet and f.paired == ref.paired
            assert fast.blocked.dtype == ref.blocked.dtype and np.array_equal(fast.blocked, ref.blocked)
            checked += 1
        assert hs.dtype == np.float64 and outs.dtype == np.int64 and wet.dtype == bool
    assert checked >= 4 * 12
    _, blocked, _, count, _, wet = range_equity.pair_features_boards(np.array([[0, 1, 2]], dtype=np.uint8), pair_index(1, 7))
    assert blocked[0] and count[0] == 0 and not wet[0]  # trips of 2s: one rank, three suits
    # the texture's edges: the ace high only (A-2-3 is not within five ranks, 2-3-4 is), three of a suit, ranks in order
    for bd in ([0, 4, 8], [48, 1, 5], [48, 44, 40], [48, 0, 5], [0, 20, 40], [1, 21, 41], [0, 4, 9, 13], [30, 8, 49]):
        pair = pair_index(*[c for c in range(52) if c not in bd][:2])
        got = range_equity.pair_features_boards(np.array([bd], dtype=np.uint8), pair)[5][0]
        assert got == rb.BoardFeatures(tuple(sorted(bd)), np.array([pair]), compiled=False).wet, bd


def test_pair_features_boards_refuses_bad_input():
    with pytest.raises(ValueError, match="3, 4 or 5"):
        range_equity.pair_features_boards(np.zeros((1, 2), dtype=np.uint8), 0)
    with pytest.raises(ValueError, match="distinct"):
        range_equity.pair_features_boards(np.array([[1, 1, 2]], dtype=np.uint8), 0)
    with pytest.raises(ValueError, match="0..1325"):
        range_equity.pair_features_boards(np.array([[1, 2, 3]], dtype=np.uint8), 1326)
    with pytest.raises(ValueError, match="one street"):
        rb.pair_features_on_boards([[1, 2, 3], [1, 2, 3, 4]], 0)


def test_hand_vs_hand_boards_is_the_per_board_count():
    rng = np.random.default_rng(5)
    for n in (0, 1, 3, 4, 5):
        cards = [int(c) for c in rng.permutation(52)]
        h0, h1 = cards[:2], cards[2:4]
        boards = [[int(c) for c in rng.choice(cards[4:], n, replace=False)] for _ in range(5 if n > 3 else 2)]
        got = equity_kernel.hand_vs_hand_boards(h0[0], h0[1], h1[0], h1[1], np.array(boards, dtype=np.uint8).reshape(len(boards), n))
        assert got.shape == (len(boards), 3) and got.dtype == np.int64
        for row, bd in zip(got, boards):
            assert tuple(row) == hand_vs_hand_counts(h0, h1, bd), (n, bd)
    with pytest.raises(ValueError, match="distinct"):
        equity_kernel.hand_vs_hand_boards(0, 1, 2, 3, np.array([[3, 4, 5]], dtype=np.uint8))
    with pytest.raises(ValueError, match="distinct"):
        equity_kernel.hand_vs_hand_boards(0, 1, 1, 3, np.zeros((0, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="more than 5"):
        equity_kernel.hand_vs_hand_boards(0, 1, 2, 3, np.array([[4, 5, 6, 7, 8, 9]], dtype=np.uint8))


def test_flop_and_turn_counts_by_ranks_are_the_enumeration():
    """On flops ``hand_vs_hand_boards`` counts the 990 run-outs by their rank pairs (the flush-making ones as cards,
    a hand with 4+ cards of a suit by the full enumeration), on turns the 44 rivers by their ranks (a hand with 5+
    by the enumeration): the same (wins, ties, losses) as the enumeration of every run-out (``hand_vs_hand_counts``)
    on random deals and on deals where either hand holds 2, 3, 4 or 5 cards of a suit with the flop (both hands
    drawing to flushes of one suit or of two, pairs and trips on the flop), with turn cards of every suit."""
    rng = np.random.default_rng(27)
    deals = [[int(c) for c in rng.choice(52, 7, replace=False)] for _ in range(300)]
    for _ in range(600):
        suits = rng.choice(4, 2, replace=False)
        k = int(rng.integers(2, 6))  # cards of the first suit among the flop and the first hand
        first = [4 * int(r) + int(suits[0]) for r in rng.choice(13, k, replace=False)]
        rest = [c for c in range(52) if c not in first]
        second = [c for c in rest if c & 3 == suits[1]] if rng.random() < 0.5 else rest
        extra = [int(c) for c in rng.choice(second, 7 - k, replace=False)]
        flop_and_a = first + extra[:5 - k] if k < 5 else first
        flop_and_a = [int(c) for c in rng.permutation(flop_and_a)]
        others = [c for c in extra if c not in flop_and_a]
        b = others[:2] if len(others) >= 2 else [int(c) for c in rng.choice([c for c in range(52) if c not in flop_and_a], 2, replace=False)]
        deals.append(flop_and_a[:2] + b + flop_and_a[2:5])
    for _ in range(100):  # paired and trip flops
        r = int(rng.integers(13))
        flop = [4 * r, 4 * r + 1, 4 * r + 2 if rng.random() < 0.5 else 4 * int((r + 1 + rng.integers(12)) % 13) + 3]
        hands = [int(c) for c in rng.choice([c for c in range(52) if c not in flop], 4, replace=False)]
        deals.append(hands + flop)
    for d in deals:
        a1, a2, b1, b2 = d[:4]
        flop = np.array([d[4:7]], dtype=np.uint8)
        got = equity_kernel.hand_vs_hand_boards(a1, a2, b1, b2, flop)[0]
        ref = equity_kernel.hand_vs_hand_counts(a1, a2, b1, b2, flop[0])
        assert tuple(int(x) for x in got) == tuple(ref), d
        assert int(got.sum()) == 990
        # and a turn on it: the 44 rivers by their ranks (flush cards as cards), every turn card of the first suits
        for turn in sorted({c for c in range(52) if c not in d} & set(range(52)), key=lambda c: (c & 3, c))[::7]:
            board = np.array([d[4:7] + [turn]], dtype=np.uint8)
            got = equity_kernel.hand_vs_hand_boards(a1, a2, b1, b2, board)[0]
            assert tuple(int(x) for x in got) == tuple(equity_kernel.hand_vs_hand_counts(a1, a2, b1, b2, board[0])), (
                d, turn)
            assert int(got.sum()) == 44


@pytest.mark.parametrize("n", [3, 4, 5])
def test_board_equities_are_the_value_functions_equities(n):
    """``_Boards.equity`` (the missing boards counted in one kernel call) gives ``_equity`` of each board, the
    float64 formula included, and leaves them in the value function's memo as ``_equity`` would."""
    rng = np.random.default_rng(n)
    cards = [int(c) for c in rng.permutation(52)]
    hole = (cards[:2], cards[2:4])
    boards = [[int(c) for c in rng.choice(cards[4:], n, replace=False)] for _ in range(9)]
    vf = SimpleNamespace(_shared=SimpleNamespace(equities={}))
    vf._equity = lambda hole_, board: bv._equity(hole_[0], hole_[1], board)
    ctx = bv._Boards(vf, SimpleNamespace(hole=hole, board=[]), boards)
    vf._shared.equities[(tuple(hole[0]), tuple(hole[1]), tuple(boards[4]))] = 0.123  # a remembered one is read
    got = ctx.equity(np.array([0, 2, 4, 5, 7]))
    want = [bv._equity(hole[0], hole[1], boards[k]) for k in (0, 2)] + [0.123] + \
        [bv._equity(hole[0], hole[1], boards[k]) for k in (5, 7)]
    assert got.tolist() == want
    assert ctx.equity(np.arange(9)).tolist() == [bv._equity(hole[0], hole[1], b) if k != 4 else 0.123
                                                 for k, b in enumerate(boards)]
    assert vf._shared.equities[(tuple(hole[0]), tuple(hole[1]), tuple(boards[8]))] == bv._equity(hole[0], hole[1], boards[8])


def test_rank_tables_built_by_racing_threads_give_the_serial_counts():
    """The rank-class tables are built on first use: threads asking at once in a fresh process (each may build a
    copy; one is published whole) get the counts a single thread gets."""
    code = """
import threading, numpy as np
from cfrkit._kernels import range_equity
rng = np.random.default_rng(1)
rivers = np.array([rng.choice(52, 5, replace=False) for _ in range(480)], dtype=np.uint8)
pairs = np.array([3, 700, 1200], dtype=np.int64)
out = [None] * 6
def run(i):
    out[i] = range_equity.river_ehs_of_pairs(rivers, 24, pairs)
threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
[t.start() for t in threads]
[t.join() for t in threads]
again = range_equity.river_ehs_of_pairs(rivers, 24, pairs)
assert all(np.array_equal(o, again, equal_nan=True) for o in out)
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
                                                      + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0 and got.stdout.strip() == "ok", got.stderr[-2000:]
