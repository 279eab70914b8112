"""The E[HS] buckets of a chance node's boards in one kernel call (``range_equity.river_ehs_buckets``, used by
``EHSAbstraction.pair_buckets_boards``) and the branch-free flush corrections of the river pair counts: the same
buckets and win / tie counts as the numpy steps they replace (``searchsorted(edges, river_ehs_of_pairs(...),
side="right")`` with -1 for NaN; the sweep of all 1326 pairs' classes), bit for bit (issue 27, match speed part 7)."""
import gc

import numpy as np
import pytest

from cfrkit._kernels import pair_ehs, range_equity
from cfrkit.abstraction.ehs_abstraction import EHSAbstraction
from cfrkit.cards.hands import pair_index


def _reference_buckets(rivers, block, pairs, edges):
    """The numpy steps the kernel replaces: the E[HS], its bucket (side="right"), -1 where NaN."""
    values = range_equity.river_ehs_of_pairs(rivers, block, pairs)
    out = np.searchsorted(edges, values, side="right").astype(np.int32)
    out[np.isnan(values)] = -1
    return out, values


def _rivers(rng, count: int) -> np.ndarray:
    return np.array([rng.choice(52, 5, replace=False) for _ in range(count)], dtype=np.uint8)


def _flush_rivers(rng, count: int, n: int) -> np.ndarray:
    """5-card boards with exactly ``n`` cards of one suit (3, 4 or 5)."""
    out = []
    for _ in range(count):
        suit = int(rng.integers(4))
        suited = (rng.choice(13, n, replace=False) * 4 + suit).tolist()
        out.append(suited + [int(c) for c in rng.permutation(52) if c % 4 != suit][:5 - n])
    return np.array(out, dtype=np.uint8)


@pytest.mark.parametrize("block", [1, 8, 24])
def test_bucket_kernel_is_searchsorted_of_the_ehs(block):
    rng = np.random.default_rng(block)
    rivers = np.concatenate([_rivers(rng, 240), _flush_rivers(rng, 48, 3), _flush_rivers(rng, 48, 4)])
    rivers = np.ascontiguousarray(rivers[rng.permutation(len(rivers))][:len(rivers) // block * block])
    # pairs touching boards (NaN on a group of one board), and pairs off every board
    pairs = np.array([0, 5, 77, 700, 1000, 1325] + rng.choice(1326, 6, replace=False).tolist(), dtype=np.int64)
    values = range_equity.river_ehs_of_pairs(rivers, block, pairs)
    finite = np.sort(values[np.isfinite(values)])
    # edges that are some of the values themselves (a value equal to an edge goes above it: side="right"), a
    # repeated edge, and edges between values
    edges = np.unique(np.concatenate([finite[::7], finite[::11] + 1e-9, [0.25, 0.5, 0.75]]))
    edges = np.sort(np.concatenate([edges, edges[3:5]]))
    want, _ = _reference_buckets(rivers, block, pairs, edges)
    got = range_equity.river_ehs_buckets(rivers, block, pairs, edges)
    assert got.dtype == np.int32 and got.shape == want.shape
    assert np.array_equal(got, want)
    # the data tells the sides apart (a kernel counting the edges strictly below would fail) and holds -1s
    left = np.searchsorted(edges, values, side="left")
    ok = np.isfinite(values)
    assert np.any(left[ok] != want[ok])
    if block == 1:
        assert np.any(want == -1)


def test_bucket_kernel_with_an_abstractions_edges_and_sampled_runouts():
    """The abstraction's own edges on a chance node's sampled run-outs: the kernel's buckets are
    ``buckets_for_board``'s rows (the full 1,326-pair path) for the two hands."""
    ab = EHSAbstraction((169, 50, 50, 50), runouts=24, calibration_boards=4, seed=5)
    rng = np.random.default_rng(3)
    for r, n in ((1, 3), (2, 4)):
        ids = np.sort(np.array([rng.choice(52, n, replace=False) for _ in range(16)], dtype=np.int64), axis=1)
        seeds = np.array([ab._seed_of(row) for row in ids.tolist()], dtype=np.uint64)
        rivers = pair_ehs.sampled_runouts(ids, seeds, 24)
        for _ in range(4):
            pairs = rng.choice(1326, 2, replace=False).astype(np.int64)
            got = range_equity.river_ehs_buckets(rivers, 24, pairs, ab.edges[r])
            want = np.array([ab.buckets_for_board(r, row.tolist())[pairs] for row in ids])
            assert np.array_equal(got, want), (r, pairs)


@pytest.mark.parametrize("suited", [3, 4, 5])
def test_flush_corrections_are_the_sweep_of_all_pairs(suited):
    """The pair counts on boards with 3, 4, 5 cards of a suit (the branch-free flush lists and corrections) equal the
    sweep of all 1326 pairs' classes, for pairs holding 0, 1 and 2 cards of the suit, on and off the board."""
    rng = np.random.default_rng(10 + suited)
    rivers = _flush_rivers(rng, 60, suited)
    strengths = range_equity.river_strengths(rivers)
    for k in range(len(rivers)):
        suit = np.bincount(rivers[k] % 4, minlength=4).argmax()
        live = [c for c in range(52) if c not in rivers[k].tolist()]
        of_suit = [c for c in live if c % 4 == suit]
        other = [c for c in live if c % 4 != suit]
        picks = [(of_suit[0], of_suit[-1]), (of_suit[1], other[3]), (other[0], other[-1]),
                 (int(rivers[k][0]), other[5])]  # the last one touches the board
        pairs = np.array([pair_index(*p) for p in picks], dtype=np.int64)
        got = range_equity.river_ehs_of_pairs(np.ascontiguousarray(rivers[k:k + 1]), 1, pairs)[0]
        want = pair_ehs.uniform_river_ehs_pairs(strengths[k:k + 1], pairs)
        assert np.array_equal(got, want, equal_nan=True), (rivers[k].tolist(), picks)
        assert np.isnan(got[3]) and np.isfinite(got[:3]).all()


def test_bucket_kernel_refuses_bad_input_in_one_line():
    rivers = np.array([[0, 5, 10, 15, 20]], dtype=np.uint8)
    pairs = np.array([100], dtype=np.int64)
    with pytest.raises(ValueError, match="non-decreasing"):
        range_equity.river_ehs_buckets(rivers, 1, pairs, np.array([0.5, 0.2]))
    with pytest.raises(ValueError, match="non-decreasing"):
        range_equity.river_ehs_buckets(rivers, 1, pairs, np.array([0.2, np.nan]))
    with pytest.raises(ValueError, match="block"):
        range_equity.river_ehs_buckets(rivers, 2, pairs, np.array([0.5]))
    with pytest.raises(ValueError, match="pair index"):
        range_equity.river_ehs_buckets(rivers, 1, np.array([1326], dtype=np.int64), np.array([0.5]))
    with pytest.raises(ValueError, match="shape"):
        range_equity.river_ehs_buckets(np.zeros((1, 4), dtype=np.uint8), 1, pairs, np.array([0.5]))
    # no edges: one bucket (0), -1 for a pair touching the board
    touching = np.array([pair_index(0, 5), 100], dtype=np.int64)
    assert range_equity.river_ehs_buckets(rivers, 1, touching, np.zeros(0)).tolist() == [[-1, 0]]


def test_sorted_boards_kernel_is_numpys_sort_and_refuses_bad_cards():
    rng = np.random.default_rng(4)
    for n in (0, 3, 4, 5):
        boards = np.array([rng.choice(52, n, replace=False) for _ in range(50)], dtype=np.int64).reshape(50, n)
        assert np.array_equal(pair_ehs.sorted_boards(boards), np.sort(boards, axis=1))
    for bad in ([[1, 2, 2]], [[1, 2, 52]], [[-1, 2, 3]], [[4, 9, 17], [3, 3, 8]]):
        with pytest.raises(ValueError, match="distinct card ids 0..51"):
            pair_ehs.sorted_boards(np.array(bad, dtype=np.int64))


def test_remembered_boards_answer_other_pairs_and_subsets():
    """A board remembered with two pairs answers either pair alone and recomputes for a pair it does not hold; the
    answers are ``buckets_for_board``'s rows either way (the one-entry-per-board memory of pair_buckets_boards)."""
    ab = EHSAbstraction((169, 9, 9, 9), runouts=24, calibration_boards=3, seed=8)
    rng = np.random.default_rng(6)
    for r, n in ((1, 3), (2, 4), (3, 5)):
        boards = [sorted(rng.choice(52, n, replace=False).tolist()) for _ in range(12)]
        pairs = rng.choice(1326, 2, replace=False).tolist()
        first = ab.pair_buckets_boards(r, boards, pairs)
        rows = [ab.buckets_for_board(r, b) for b in boards]  # the full rows (cached afterwards: clear it)
        ab._cache.clear()
        for k, b in enumerate(boards):
            assert first[k].tolist() == rows[k][pairs].tolist()
            assert ab.pair_buckets(r, b[::-1], [pairs[1]]).tolist() == [rows[k][pairs[1]]]
            other = int(rng.integers(1326))
            assert ab.pair_buckets(r, b, [other, pairs[0]]).tolist() == [rows[k][other], rows[k][pairs[0]]]
        again = ab.pair_buckets_boards(r, boards[::-1], pairs[::-1])
        assert again.tolist() == [[row[pairs[1]], row[pairs[0]]] for row in rows[::-1]]


def test_remembered_boards_stay_out_of_the_garbage_collectors_way():
    """The remembered per-board entries of pair_buckets_boards are tuples of ints, so the gc untracks them after one
    pass and its full collections do not walk every kept board (a list row kept them tracked: the always-call vs
    A^C match spent ~11% of its CPU in gc, benchmarks/RESULTS.md, match speed part 8); the rows read back are the
    kernel's buckets."""
    ab = EHSAbstraction((169, 9, 9, 9), runouts=24, calibration_boards=3, seed=8)
    rng = np.random.default_rng(9)
    boards = [sorted(rng.choice(52, 3, replace=False).tolist()) for _ in range(40)]
    pairs = rng.choice(1326, 2, replace=False).tolist()
    got = ab.pair_buckets_boards(1, boards, pairs)
    gc.collect()
    gc.collect()  # an entry is untracked once its inner tuples are (the pass after theirs)
    kept = [ab._pairs[(1, tuple(b))] for b in boards]
    assert not any(gc.is_tracked(entry) for entry in kept)
    assert [list(entry[1]) for entry in kept] == got.tolist()
    assert ab.pair_buckets_boards(1, boards, pairs).tolist() == got.tolist()  # answered from the entries


def test_sampled_boards_are_bucketed_without_the_memory():
    """``pair_buckets_boards(..., sampled=k)``: the same rows as without it (``buckets_for_board``'s), the first k
    boards neither read from nor kept in the per-board memory, the others remembered; with a remembered board among
    the others its remembered row is read (a wrong row planted there shows through, so the memory is really read)."""
    ab = EHSAbstraction((169, 9, 9, 9), runouts=24, calibration_boards=3, seed=8)
    rng = np.random.default_rng(12)
    for r, n in ((1, 3), (2, 4), (3, 5)):
        boards = [rng.choice(52, n, replace=False).tolist() for _ in range(9)]
        pairs = rng.choice(1326, 2, replace=False).tolist()
        rows = [ab.buckets_for_board(r, b)[pairs].tolist() for b in boards]
        ab._cache.clear()
        ab._pairs.clear()
        for k in (9, 8, 5):
            got = ab.pair_buckets_boards(r, boards, pairs, sampled=k)
            assert got.tolist() == rows
            assert not any((r, tuple(sorted(b))) in ab._pairs for b in boards[:k])
            assert all(ab._pairs[(r, tuple(sorted(b)))][1] == tuple(rows[j + k]) for j, b in enumerate(boards[k:]))
        planted = (r, tuple(sorted(boards[-1])))
        ab._pairs[planted] = (tuple(pairs), (-7, -7))
        got = ab.pair_buckets_boards(r, boards, pairs, sampled=5)
        assert got[:-1].tolist() == rows[:-1] and got[-1].tolist() == [-7, -7]
        ab._pairs.clear()
        if n < 5:  # the run-outs: each board's own (its seed _seed_of), the sampled boards' seeds not kept
            ids = np.sort(np.array(boards, dtype=np.int64), axis=1)
            for k in (0, 4, 9):
                ab._seeds.clear()
                rivers, block = ab._rivers_of_sorted(ids, ids.tolist(), k)
                assert block == 24 and np.array_equal(rivers, np.concatenate([ab._rivers(row) for row in ids]))
                assert set(ab._seeds) == {tuple(row) for row in ids.tolist()[k:]}


def _card(text: str) -> int:
    return "23456789TJQKA".index(text[0]) * 4 + "cdhs".index(text[1])


@pytest.mark.parametrize("board", ["As Ks 7s Ad 2c", "9h 9d 5h Jh 9c", "Qs Qd 4s 8s 4c", "Tc 8c 6c 4c Td"])
def test_flush_classes_are_counted_for_pairs_at_a_flush_or_above(board):
    """On a board with 3+ cards of a suit and a pair, the flush pairs' own classes enter only the counts of pairs at a
    flush or above (full houses, quads, flushes; computed when the first such pair is asked): every order of weak,
    full-house and flush pairs, and all 1326 pairs, equal the sweep of all pairs' classes bit for bit."""
    river = np.array([[_card(c) for c in board.split()]], dtype=np.uint8)
    strengths = range_equity.river_strengths(river)
    live = [c for c in range(52) if c not in river[0].tolist()]
    suit = int(np.bincount(river[0] % 4, minlength=4).argmax())
    ranks = (river[0] // 4).tolist()
    paired = max(set(ranks), key=ranks.count)
    full = [c for c in live if c // 4 == paired or (c // 4 in ranks and c // 4 != paired)][:2]  # trips+ or two pair up
    flush = [c for c in live if c % 4 == suit][:2]
    weak = [c for c in live if c % 4 != suit and c // 4 not in ranks][:2]
    groups = {"full": pair_index(*full), "flush": pair_index(*flush), "weak": pair_index(*weak)}
    assert strengths[0, groups["full"]] > strengths[0, groups["weak"]]
    orders = [["weak", "full"], ["full", "weak"], ["weak", "flush"], ["weak", "weak"], ["flush", "full", "weak"]]
    for order in orders:
        pairs = np.array([groups[g] for g in order], dtype=np.int64)
        got = range_equity.river_ehs_of_pairs(river, 1, pairs)[0]
        assert np.array_equal(got, pair_ehs.uniform_river_ehs_pairs(strengths, pairs), equal_nan=True), order
    every = np.arange(1326, dtype=np.int64)
    assert np.array_equal(range_equity.river_ehs_of_pairs(river, 1, every)[0],
                          pair_ehs.uniform_river_ehs_pairs(strengths, every), equal_nan=True)


@pytest.mark.parametrize("suited", [3, 4])
def test_flush_suit_opponents_out_by_rank_pair_counts_for_every_pair(suited):
    """Below a flush the opponents holding the flush (both cards of the suit on a 3-suited board, one on a 4-suited
    one) are taken out of the rank pairs' counts at once: every pair's counts on such boards (and on boards with a
    pair, trips or a straight) equal the sweep of all 1326 pairs' classes bit for bit."""
    rng = np.random.default_rng(40 + suited)
    every = np.arange(1326, dtype=np.int64)
    rivers = _flush_rivers(rng, 30, suited)
    for k in range(len(rivers)):
        river = np.ascontiguousarray(rivers[k:k + 1])
        want = pair_ehs.uniform_river_ehs_pairs(range_equity.river_strengths(river), every)
        assert np.array_equal(range_equity.river_ehs_of_pairs(river, 1, every)[0], want, equal_nan=True), \
            rivers[k].tolist()
