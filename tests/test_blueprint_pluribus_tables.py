"""The Pluribus trainer's board preparation in the kernel: bucket-table lookups without the GIL.

The kernel indexes each dealt hand (suit isomorphism) and reads the round's uint16 table itself; these tests
check that lookup against the Python one (``HandIndexer.index_batch`` + the table), that training with kernel
lookups gives bit-identical tables to training with the same abstraction's buckets computed in Python, that
chunked iterations equal single ones, that threads on table lookups converge, and that a damaged table stops
the kernel with one error.  Tables of the turn and river are sparse memory maps in ``tmp_path`` (4.9 GB of
address space for the river, a few MB on disk): only the entries of the boards a test plays are written.
"""
import numpy as np
import pytest

from cfrkit.cards.encoding import as_card_ids
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, blocked_pairs, pair_index_of
from cfrkit.cards.isomorphism import holdem_indexer
from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
from cfrkit.solvers.blueprint.pluribus import PluribusTrainer
from test_blueprint import BOARD, HANDS, SMALL_GAME, HandListAbstraction
from test_blueprint_pluribus import _exploitability, compiled, small_tree  # noqa: F401 (fixtures)

BOARD_CARDS = (0, 3, 4, 5)


class TableAbstraction:
    """A card abstraction read from four uint16 tables over the suit-isomorphism indices (the interface of
    :class:`cfrkit.abstraction.CardAbstraction` that the trainer uses, Python lookups included)."""

    def __init__(self, tables, buckets):
        self.tables = tables
        self.buckets = tuple(buckets)
        self.indexer = holdem_indexer()

    def num_buckets(self, r):
        return self.buckets[r]

    def bucket_tables(self):
        return self.tables

    def indices(self, r, board):
        live = np.flatnonzero(~blocked_pairs([int(c) for c in board]))
        cards = np.empty((live.size, 2 + len(board)), dtype=np.uint8)
        cards[:, :2] = HOLE_PAIRS[live]
        cards[:, 2:] = np.asarray(board, dtype=np.uint8)
        return live, self.indexer.index_batch(cards)

    def buckets_for_board(self, r, board):
        out = np.full(NUM_PAIRS, -1, dtype=np.int32)
        live, idx = self.indices(r, board)
        out[live] = np.asarray(self.tables[r][idx]).astype(np.int32)
        return out


def _tables(tmp_path, buckets, seed=0):
    """Random preflop and flop tables in memory; sparse, zero-filled turn and river memory maps."""
    ix = holdem_indexer()
    rng = np.random.default_rng(seed)
    tables = [rng.integers(0, buckets[r], ix.size(r)).astype(np.uint16) for r in (0, 1)]
    for r in (2, 3):
        tables.append(np.memmap(tmp_path / f"round{r}.bin", dtype=np.uint16, mode="w+", shape=(ix.size(r),)))
    return tables


def _fill(ab, boards, seed=1):
    """Random buckets for every live hand of ``boards`` on the turn and river tables."""
    rng = np.random.default_rng(seed)
    for board in boards:
        for r in (2, 3):
            _, idx = ab.indices(r, board[:BOARD_CARDS[r]])
            ab.tables[r][idx] = rng.integers(0, ab.buckets[r], idx.size).astype(np.uint16)


def _trainer(ab, tree, **kw):
    args = dict(abstraction=ab, tree=tree, seed=5, deals_per_board=16, prune_warmup=3, prune_threshold=-20.0,
                discount_every=2, discount_until=8, boards_per_iteration=2)
    args.update(kw)
    return PluribusTrainer(SMALL_GAME, "0.5+1", 1, **args)


def test_kernel_lookup_equals_the_python_lookup(tmp_path):
    from cfrkit._kernels import blueprint_pluribus as k

    ab = TableAbstraction(_tables(tmp_path, (169, 7, 9, 11)), (169, 7, 9, 11))
    rng = np.random.default_rng(3)
    boards = [rng.permutation(52)[:5].astype(np.uint8) for _ in range(3)]
    _fill(ab, boards)
    ix = holdem_indexer()
    lookup = k.BucketTables(ab.tables, [ix.index_tables(r) for r in range(4)], ab.buckets)
    for board in boards:
        for r in range(4):
            live, idx = ab.indices(r, board[:BOARD_CARDS[r]])
            cards = np.empty((live.size, 2 + BOARD_CARDS[r]), dtype=np.uint8)
            cards[:, :2] = HOLE_PAIRS[live]
            cards[:, 2:] = board[:BOARD_CARDS[r]]
            got = lookup.buckets(r, cards)
            assert np.array_equal(got, np.asarray(ab.tables[r][idx]).astype(np.int32))
            assert np.array_equal(got, ab.buckets_for_board(r, board[:BOARD_CARDS[r]])[live])
    bad = np.array([[0, 0, 5, 6, 7]], dtype=np.uint8)  # a duplicate card cannot be indexed
    assert lookup.buckets(1, bad)[0] == -1


def test_kernel_lookups_give_the_tables_of_python_lookups(tmp_path, small_tree):  # noqa: F811
    from cfrkit._kernels import blueprint_pluribus as k

    buckets = (169, 7, 9, 11)
    ab = TableAbstraction(_tables(tmp_path, buckets), buckets)
    _fill(ab, [k.sample_board(5, it, b) for it in range(1, 7) for b in range(2)])
    fast = _trainer(ab, small_tree)
    slow = _trainer(ab, small_tree, table_lookups=False)
    assert fast.kernel_lookups and not slow.kernel_lookups
    fast.iterate(6)  # one kernel call per discount interval
    for _ in range(6):
        slow.iterate(1)  # board by board, buckets from Python
    assert fast.stats.nodes == slow.stats.nodes > 0
    assert np.array_equal(fast.regrets, slow.regrets) and (fast.regrets != 0).any()
    assert np.array_equal(fast.strategy_sum, slow.strategy_sum) and (fast.strategy_sum > 0).any()
    np.testing.assert_allclose(fast.root_value_sum, slow.root_value_sum, rtol=1e-12)  # summed per call
    # the boards are the kernel's: a function of (seed, iteration, board index)
    assert np.array_equal(fast.boards_of(4)[1], k.sample_board(5, 4, 1))


def test_damaged_table_stops_the_kernel_with_one_error(tmp_path, small_tree):  # noqa: F811
    buckets = (169, 7, 9, 11)
    ab = TableAbstraction(_tables(tmp_path, buckets), buckets)
    _fill(ab, [])
    ab.tables[0][:] = 0xFFFF  # an unfinished table's marker
    tr = _trainer(ab, small_tree)
    with pytest.raises(ValueError, match="no valid bucket"):
        tr.iterate(1)


def _hand_list_tables(tmp_path):
    """Tables that bucket the fixed board's five hands as :class:`HandListAbstraction` does (other hands are
    never dealt)."""
    ix = holdem_indexer()
    n = len(HANDS) + 1
    tables = _tables(tmp_path, (n,) * 4)
    for r in (0, 1):
        tables[r][:] = n - 1
    board = as_card_ids(BOARD)
    for r in range(4):
        cards = np.array([list(HOLE_PAIRS[pair_index_of(h)]) + board[:BOARD_CARDS[r]] for h in HANDS], dtype=np.uint8)
        idx = ix.index_batch(cards)
        assert np.unique(idx).size == len(HANDS)  # no two of the hands are isomorphic here
        tables[r][idx] = np.arange(len(HANDS), dtype=np.uint16)
    return TableAbstraction(tables, (n,) * 4)


def test_threads_on_kernel_lookups_converge(tmp_path, small_tree, compiled):  # noqa: F811
    ab = _hand_list_tables(tmp_path)
    weights = np.zeros(NUM_PAIRS)
    weights[[pair_index_of(h) for h in HANDS]] = 1.0
    kw = dict(tree=small_tree, board=BOARD, hand_weights=weights, deals_per_board=64, average="all",
              discount_every=10, discount_until=200, prune_warmup=50, seed=1)
    # one thread with kernel lookups equals the Python buckets of HandListAbstraction, bit for bit
    a = PluribusTrainer(SMALL_GAME, "0.5+1", 1, abstraction=ab, **kw)
    b = PluribusTrainer(SMALL_GAME, "0.5+1", 1, abstraction=HandListAbstraction(HANDS), **kw)
    a.iterate(30)
    b.iterate(30)
    assert a.kernel_lookups and np.array_equal(a.regrets, b.regrets)
    tr = PluribusTrainer(SMALL_GAME, "0.5+1", 1, abstraction=ab, threads=2, **kw)
    try:
        tr.iterate(400)
    finally:
        tr.close()
    assert tr.iterations == 400 and _exploitability(tr, small_tree, compiled) < 14.0


PL_OPTS = ["--algorithm", "pluribus", "--game", SMALL_GAME, "--bets", "0.5+1@1", "--abstraction", "ehs:169,5,5,5",
           "--deals-per-board", "8", "--discount-every", "3", "--discount-until", "1000000", "--prune-warmup", "5",
           "--no-progress"]


@pytest.mark.slow
def test_sigterm_then_resume_equals_one_run(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from cfrkit.cli import main as cli_main
    from cfrkit.solvers.blueprint.trainer import read_checkpoint

    a, b = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(tmp_path / "log.txt", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "blueprint", "train", a, "--minutes", "5",
                                 "--checkpoint-minutes", "0.002"] + PL_OPTS, stdout=log, stderr=log, env=env,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while not os.path.exists(a) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(1.0)  # interrupt in the middle of the discount phase (every 3 iterations)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 128 + signal.SIGTERM
    header, _ = read_checkpoint(a, arrays=())
    k = int(header["iterations"])
    assert k > 5 and header["cpu_seconds"] > 0
    assert cli_main(["blueprint", "train", b, "--iterations", str(k + 7)] + PL_OPTS) == 0
    assert cli_main(["blueprint", "train", a, "--iterations", str(k + 7), "--no-progress"]) == 0
    ra, rb = PluribusTrainer.load(a), PluribusTrainer.load(b)
    assert ra.iterations == rb.iterations == k + 7 and ra.stats.nodes == rb.stats.nodes
    assert np.array_equal(ra.regrets, rb.regrets) and np.array_equal(ra.strategy_sum, rb.strategy_sum)
    # a CPU budget is a total over the file's history
    c = str(tmp_path / "c.npz")
    assert cli_main(["blueprint", "train", c, "--cpu-minutes", "0.01"] + PL_OPTS) == 0
    used = PluribusTrainer.load(c).stats.cpu_seconds
    assert used >= 0.6
    assert cli_main(["blueprint", "train", c, "--cpu-minutes", "0.01", "--no-progress"]) == 0
    assert PluribusTrainer.load(c).stats.cpu_seconds == used


def test_card_abstraction_offers_tables_only_for_four_full_deck_rounds(tmp_path):
    from cfrkit.abstraction.build import build_abstraction

    pre = build_abstraction((169,), str(tmp_path / "pre"), progress=False)
    assert pre.bucket_tables() is None  # one round: not a hold'em blueprint's abstraction
