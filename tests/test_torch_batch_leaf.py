"""Many depth-limited turn / flop trees in one torch solve (MultiBoardLeafSolver) against RangeSolver per tree."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.games import load  # noqa: E402
from cfrkit.solvers.public.torch_batch import (MultiBoardLeafSolver, bytes_per_row, bytes_per_tree,  # noqa: E402
                                               rows_for_memory, solve_leaf_trees, tree_signature)
from cfrkit.solvers.public.tree import RangeSolver  # noqa: E402
from cfrkit.value_nets.holdem.datagen import sizing_levels, solve_situations, street_tree  # noqa: E402
from cfrkit.value_nets.holdem.situations import group_slices, sample_situations  # noqa: E402
from cfrkit.value_nets.holdem.studies import random_holdem_nets  # noqa: E402


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # one torch thread: its pool spins on a loaded 2-core machine


@pytest.fixture(scope="module")
def nets():
    """Small random-weight nets (river 50 hand-strength classes, turn 20 buckets): the leaves' shape, not their values."""
    return random_holdem_nets("cpu", 0, hidden=(32, 32), river_buckets=50, buckets=20)


def _groups(street, count, seed):
    g = load("holdem")
    sit = sample_situations(street, count, np.random.default_rng(seed), group=2, stack=20000.0)
    trees, ranges = [], []
    for idx in group_slices(sit.groups):
        trees.append(street_tree(g, sizing_levels(None), sit.boards[idx[0]], float(sit.contribs[idx[0]]), True))
        ranges.append(sit.ranges[idx])
    return sit, trees, ranges


@pytest.fixture(scope="module")
def turn_groups():
    """Four turn groups of two situations (every group its own board; two tree shapes, three trees in one batch)."""
    return _groups("turn", 8, [1, 3])


def _reference(tree, r, fn, iterations, skip):
    s = RangeSolver(tree, ranges=r, skip=skip, leaf_values=fn, terminal_kernel="sorted", backend="torch",
                    device="cpu").run(iterations)
    return s.be.to_numpy(s.average_root_values())


class _PlainLeaves:
    """The net's RangeSolver interface only (no row_evaluator): the solver's per-tree fallback."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, leaves, r0, r1, backend):
        return self.fn(leaves, r0, r1, backend)


def test_turn_batched_equals_range_solver_per_tree(turn_groups, nets):
    _, trees, ranges = turn_groups
    fn = nets.leaf_values("river")
    assert len({tuple(t.root.board) for t in trees}) == len(trees)
    shapes = {}
    for k, t in enumerate(trees):
        shapes.setdefault(tree_signature(t), []).append(k)
    assert max(len(v) for v in shapes.values()) >= 3                 # one batch really holds several boards
    out = solve_leaf_trees(trees, ranges, fn, 6, 3, device="cpu", dtype="float64")
    plain = solve_leaf_trees(trees, ranges, _PlainLeaves(fn), 6, 3, device="cpu", dtype="float64")
    for t, r, v, p in zip(trees, ranges, out, plain):
        ref = _reference(t, r, fn, 6, 3)
        assert v.shape == ref.shape == (2, 2, 1326)
        # the same iterates: float64 rounding only (a wrong leaf board, chance mask or all-in matrix is O(pot))
        assert np.abs(v - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(p - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(ref).max() > 0.01 * t.root.pot


def test_turn_split_batches_and_float32_against_compiled(turn_groups, nets):
    sit, trees, ranges = turn_groups
    fn = nets.leaf_values("river")
    whole = solve_leaf_trees(trees, ranges, fn, 4, 2, device="cpu", dtype="float64")
    split = solve_leaf_trees(trees, ranges, fn, 4, 2, device="cpu", dtype="float64", max_rows=3)  # one tree a batch
    for a, b in zip(whole, split):
        assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()
    # float32 (the CUDA dtype) against float64, range-weighted |difference| as a fraction of the pot.  One iteration:
    # rounding only (measured <= 1e-6).  After 4 iterations CFR+ sends exactly indifferent hands different ways
    # under either rounding: on 200-chip pots with 20000-chip stacks (values up to 45 pots) measured 0.013, exactly
    # as far as the compiled float32 BoardLeafSolver (the datagen's default path) is from the same float64 values;
    # elsewhere <= 4e-7.  So: within twice the compiled float32 path's own distance, or 1e-5.
    g = load("holdem")
    w = [sit.ranges[idx] for idx in group_slices(sit.groups)]
    pots = [2.0 * float(sit.contribs[idx[0]]) for idx in group_slices(sit.groups)]

    def dist(a, b, r):
        return float((np.abs(a - b) * r).sum() / r.sum())

    one32 = solve_leaf_trees(trees, ranges, fn, 1, 0, device="cpu", dtype="float32")
    one64 = solve_leaf_trees(trees, ranges, fn, 1, 0, device="cpu", dtype="float64")
    for a, b, r, pot in zip(one32, one64, w, pots):
        assert dist(a / pot, b / pot, r) < 1e-5
    f32 = solve_leaf_trees(trees, ranges, fn, 4, 2, device="cpu", dtype="float32")
    compiled = solve_situations(g, sit, 4, 2, leaf_values=fn, backend="board")
    for idx, a, b, r, pot in zip(group_slices(sit.groups), f32, whole, w, pots):
        assert dist(a / pot, b / pot, r) <= max(1e-5, 2.0 * dist(compiled[idx], b / pot, r))
        assert dist(a / pot, -b / pot, r) > 0.1                  # a sign error would not pass


def test_flop_batched_equals_range_solver(nets):
    _, trees, ranges = _groups("flop", 4, [2, 7])
    fn = nets.leaf_values("turn")
    out = solve_leaf_trees(trees, ranges, fn, 3, 1, device="cpu", dtype="float64")
    for t, r, v in zip(trees, ranges, out):
        ref = _reference(t, r, fn, 3, 1)
        assert np.abs(v - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(ref).max() > 0.01 * t.root.pot


def test_datagen_torch_turn_uses_the_batch_and_equals_numpy(nets, monkeypatch):
    from cfrkit.solvers.public import torch_batch

    sit, trees, _ = _groups("turn", 6, [4, 4])
    fn = nets.leaf_values("river")
    g = load("holdem")
    rows = []
    real_run = torch_batch.MultiBoardLeafSolver.run
    monkeypatch.setattr(torch_batch.MultiBoardLeafSolver, "run",
                        lambda self, iterations: rows.append(self.B) or real_run(self, iterations))
    tv = solve_situations(g, sit, 4, 2, leaf_values=fn, backend="torch", device="cpu")
    assert sum(rows) == 6 and len(rows) == len({tree_signature(t) for t in trees})   # one solve per tree shape
    nv = solve_situations(g, sit, 4, 2, leaf_values=fn, backend="numpy")
    assert np.abs(tv - nv).max() < 1e-9 and np.abs(nv).max() > 0.01


def test_bad_input_and_sizing(turn_groups, nets):
    _, trees, ranges = turn_groups
    fn = nets.leaf_values("river")
    by = {}
    for t, r in zip(trees, ranges):
        by.setdefault(tree_signature(t), (t, r))
    (t1, r1), (t2, r2) = list(by.values())[:2]
    with pytest.raises(ValueError, match="different shapes"):
        MultiBoardLeafSolver([t1, t2], [r1, r2], fn, device="cpu")
    with pytest.raises(ValueError, match="pass leaf_values"):
        MultiBoardLeafSolver([t1], [r1], None, device="cpu")
    full_turn = street_tree(load("holdem"), sizing_levels(None), (0, 5, 10, 15), 9000.0, False)   # not depth-limited
    with pytest.raises(ValueError, match="depth-limited"):
        solve_leaf_trees([full_turn], [np.ones((2, 1326))], fn, 2, 1, device="cpu")
    river = street_tree(load("holdem"), sizing_levels(None), (0, 5, 10, 15, 20), 200.0, False)
    with pytest.raises(ValueError, match="iterations > skip"):
        solve_leaf_trees([t1], [r1], fn, 2, 2, device="cpu")
    # leaves and all-in matrices count: a turn tree's row is much larger than its decisions alone
    assert bytes_per_row(t1) > 9 * 4 * 1326 * len(t1.leaf_nodes)
    assert bytes_per_tree(t1) == 1326 * 1326 * 4 and bytes_per_tree(river) == 0
    per = bytes_per_row(t1) + bytes_per_tree(t1) / 10
    assert rows_for_memory(t1, 7 * per, rows_per_tree=10) == 7
