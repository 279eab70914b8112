"""The E[HS] buckets of a few pairs on many boards at once (``EHSAbstraction.pair_buckets_boards``, the kernels
``pair_ehs.sampled_runouts`` / ``pcg64_doubles``, ``range_equity.river_ehs_of_pairs``): the blueprints were trained
on this bucket definition, so the kernel's run-outs must be numpy's draws exactly (checked against a numpy
reference written here, the definition before the kernel), and the buckets those of ``buckets_for_board``."""
import hashlib

import numpy as np
import pytest

from cfrkit._kernels import pair_ehs, range_equity
from cfrkit.abstraction.ehs_abstraction import EHSAbstraction
from cfrkit.cards.encoding import CardError
from cfrkit.cards.hands import pair_index


def _numpy_rivers(ab: EHSAbstraction, ids) -> np.ndarray:
    """The run-outs of the sorted board ``ids`` by numpy's generator: the reference definition."""
    ids = np.asarray(ids, dtype=np.int64)
    need = 5 - ids.size
    if need == 0:
        return ids[None, :].astype(np.uint8)
    live = np.ones(52, dtype=bool)
    live[ids] = False
    rest = np.arange(52)[live]
    if need == 1 and ab.runouts >= rest.size:
        extra = rest[:, None]
    else:
        digest = hashlib.sha256(bytes(ids.astype(np.uint8).tolist()) + ab.seed.to_bytes(8, "little")).digest()
        keys = np.random.default_rng(int.from_bytes(digest[:8], "little")).random((ab.runouts, rest.size))
        extra = rest[np.argsort(keys, axis=1, kind="stable")[:, :need]]
    out = np.empty((extra.shape[0], 5), dtype=np.uint8)
    out[:, :ids.size] = ids
    out[:, ids.size:] = extra
    return out


def _boards(rng, n: int, count: int):
    return [sorted(rng.choice(52, n, replace=False).tolist()) for _ in range(count)]


@pytest.fixture(scope="module")
def ab():
    return EHSAbstraction((169, 8, 8, 8), runouts=24, calibration_boards=4, seed=3)


def test_pcg64_is_numpys_generator():
    rng = np.random.default_rng(0)
    seeds = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 63, 2 ** 64 - 1] + [int(x) for x in rng.integers(0, 2 ** 63, 300)]
    for s in seeds:
        assert np.array_equal(pair_ehs.pcg64_doubles(s, 100), np.random.Generator(np.random.PCG64(s)).random(100)), s


@pytest.mark.parametrize("runouts,seed", [(24, 0), (24, 3), (7, 11), (48, 0)])
def test_sampled_runouts_are_numpys_draws(runouts, seed):
    ab = EHSAbstraction((169, 4, 4, 4), runouts=runouts, calibration_boards=1, seed=seed)
    rng = np.random.default_rng(runouts + seed)
    for n in (3, 4, 5):
        for board in _boards(rng, n, 400 if n < 5 else 20):
            assert np.array_equal(ab._rivers(np.array(board)), _numpy_rivers(ab, board)), (n, board)


def test_batch_buckets_equal_full_rows(ab):
    rng = np.random.default_rng(7)
    for r, n in ((1, 3), (2, 4), (3, 5)):
        boards = _boards(rng, n, 40)
        pairs = rng.choice(1326, 6, replace=False)
        full = [ab.buckets_for_board(r, b) for b in boards[::2]]  # every other board cached first
        got = ab.pair_buckets_boards(r, boards, pairs)
        assert got.shape == (40, 6) and got.dtype == np.int32
        for k, b in enumerate(boards):
            row = ab.buckets_for_board(r, b)[pairs]
            assert np.array_equal(got[k], row), (r, b)
            assert np.array_equal(ab.pair_buckets(r, b, pairs), row)
        assert np.array_equal(full[0][pairs], got[0])
    # pairs touching the board are -1, as in the full row; shuffled card order and numpy ints are the same boards
    board = [50, 3, 17]
    touching = [np.flatnonzero(ab.buckets_for_board(1, board) == -1)[0], 0]
    assert np.array_equal(ab.pair_buckets_boards(1, [board, sorted(board)], touching),
                          np.array([ab.buckets_for_board(1, board)[touching]] * 2))
    assert np.array_equal(ab.pair_buckets_boards(0, [[], []], [0, 1325]),
                          np.tile(ab.buckets_for_board(0, [])[[0, 1325]], (2, 1)))
    assert np.array_equal(ab.pair_buckets_boards(1, [["As", "Kd", "2c"]], [7]),
                          ab.buckets_for_board(1, ["As", "Kd", "2c"])[[7]][None, :])


def _flush_boards(rng, count: int):
    """5-card boards with 3, 4 or 5 cards of one suit (the flush pairs are evaluated as cards)."""
    out = []
    for _ in range(count):
        suit, n = int(rng.integers(4)), int(rng.integers(3, 6))
        suited = (rng.choice(13, n, replace=False) * 4 + suit).tolist()
        out.append(suited + [int(c) for c in rng.permutation(52) if c % 4 != suit][:5 - n])
    return out


def test_river_counts_from_rank_classes_are_the_sweep_of_all_pairs():
    """``river_ehs_of_pairs`` (counts from the 169 rank classes) equals ``uniform_river_ehs_pairs`` (a sweep of the
    1326 pairs' classes from ``river_strengths``) per group of boards, bit for bit, flush boards included."""
    rng = np.random.default_rng(2)
    rivers = np.array(_boards(rng, 5, 300) + _flush_boards(rng, 120), dtype=np.uint8)
    strengths = range_equity.river_strengths(rivers)
    pairs = np.array([0, 5, 700, 1325, 3, 1000, 77], dtype=np.int64)
    for block in (1, 6, 24):
        got = range_equity.river_ehs_of_pairs(rivers[:len(rivers) // block * block], block, pairs)
        for g in range(len(rivers) // block):
            want = pair_ehs.uniform_river_ehs_pairs(strengths[block * g:block * (g + 1)], pairs)
            assert np.array_equal(got[g], want, equal_nan=True), (block, g)
    for board in _boards(rng, 5, 200) + _flush_boards(rng, 100):  # two hands off the board, as AIVAT asks
        live = [c for c in rng.permutation(52).tolist() if c not in board]
        two = np.array([pair_index(*live[:2]), pair_index(*live[2:4])], dtype=np.int64)
        row = np.array([board], dtype=np.uint8)
        assert np.array_equal(range_equity.river_ehs_of_pairs(row, 1, two)[0],
                              pair_ehs.uniform_river_ehs_pairs(range_equity.river_strengths(row), two)), board


def test_bad_input_is_refused(ab):
    with pytest.raises(ValueError, match="needs boards of 3"):
        ab.pair_buckets_boards(1, [[1, 2, 3, 4]], [0])
    with pytest.raises(ValueError, match="distinct"):
        ab.pair_buckets_boards(1, [[1, 2, 2]], [0])
    with pytest.raises(ValueError, match="0..51"):
        ab.pair_buckets_boards(1, [[1, 2, 52]], [0])
    with pytest.raises(ValueError, match="pair indices"):
        ab.pair_buckets_boards(2, [[1, 2, 3, 4]], [1326])
    with pytest.raises(ValueError, match="one seed per board"):
        pair_ehs.sampled_runouts(np.array([[1, 2, 3]]), np.array([1, 2], dtype=np.uint64), 24)
    with pytest.raises(ValueError, match="sorted distinct"):
        pair_ehs.sampled_runouts(np.array([[3, 2, 1]]), np.array([1], dtype=np.uint64), 24)
    with pytest.raises(ValueError, match="runouts"):
        pair_ehs.sampled_runouts(np.array([[1, 2, 3, 4]]), np.array([1], dtype=np.uint64), 48)
    with pytest.raises(ValueError, match="block"):
        range_equity.river_ehs_of_pairs(np.zeros((5, 5), dtype=np.uint8), 2, np.array([0]))
    with pytest.raises(ValueError, match="shape"):
        range_equity.river_ehs_of_pairs(np.zeros((5, 4), dtype=np.uint8), 1, np.array([0]))


def test_one_remembered_hand_is_its_bucket_in_the_full_row():
    """``pair_buckets`` of one hand (a Python int) on a board of Python ints (the blueprint agent's own hand) reads the
    board's remembered pairs without the checks: the same bucket as the full row, in any card order, the other pair
    of a remembered row too; a pair not remembered, numpy or string inputs and bad boards take the checked path."""
    ab = EHSAbstraction((169, 8, 8, 8), runouts=24, calibration_boards=4, seed=5)
    rng = np.random.default_rng(11)
    for r, n in ((1, 3), (2, 4), (3, 5)):
        for board in _boards(rng, n, 12):
            pairs = [int(p) for p in rng.choice(1326, 2, replace=False)]
            ab.pair_buckets_boards(r, [board], pairs)  # remembered: (r, board) -> both pairs
            full = ab.buckets_for_board(r, board)
            for q in pairs + [int(rng.integers(1326))]:   # the last one: not remembered (the checked path)
                got = ab.pair_buckets(r, board[::-1], [q])
                assert got.dtype == np.int32 and got.tolist() == [int(full[q])], (r, board, q)
                assert ab.pair_buckets(r, tuple(board), [np.int64(q)]).tolist() == [int(full[q])]
    board = [50, 3, 17]
    ab.pair_buckets_boards(1, [board], [7, 9])
    assert ab.pair_buckets(1, ["As", "2c", "6d"], [7]).tolist() == [int(ab.buckets_for_board(1, ["As", "2c", "6d"])[7])]
    with pytest.raises(CardError, match="duplicate"):
        ab.pair_buckets(1, [3, 3, 17], [7])
    with pytest.raises(CardError):
        ab.pair_buckets(1, [3, 17, 52], [7])
