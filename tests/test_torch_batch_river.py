"""Many river trees in one torch solve (cfrkit.solvers.public.torch_batch) against RangeSolver, one tree at a time."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.games import load  # noqa: E402
from cfrkit.solvers.public.torch_batch import (MultiBoardRiverSolver, bytes_per_row, rows_for_memory,  # noqa: E402
                                               solve_river_trees, tree_signature)
from cfrkit.solvers.public.tree import RangeSolver  # noqa: E402
from cfrkit.value_nets.holdem.datagen import sizing_levels, street_tree  # noqa: E402
from cfrkit.value_nets.holdem.situations import group_slices, sample_situations  # noqa: E402


pytestmark = pytest.mark.usefixtures("torch_one_thread")  # one torch thread: its pool spins on a loaded 2-core machine


@pytest.fixture(scope="module")
def groups():
    """Five river groups (boards and pots differ; three tree shapes: 9, 21 and 33 nodes)."""
    g = load("holdem")
    sit = sample_situations("river", 10, np.random.default_rng([1, 3]), group=2, stack=20000.0)
    trees, ranges = [], []
    for idx in group_slices(sit.groups):
        trees.append(street_tree(g, sizing_levels(None), sit.boards[idx[0]], float(sit.contribs[idx[0]]), False))
        ranges.append(sit.ranges[idx])
    return trees, ranges


def _reference(tree, r, iterations, skip):
    s = RangeSolver(tree, ranges=r, skip=skip, terminal_kernel="sorted", backend="torch", device="cpu").run(iterations)
    return s.be.to_numpy(s.average_root_values())


def test_batched_equals_range_solver_per_tree(groups):
    trees, ranges = groups
    assert len({tuple(t.root.board) for t in trees}) == len(trees)     # every group its own board
    assert len({tree_signature(t) for t in trees}) >= 2                 # and more than one tree shape
    out = solve_river_trees(trees, ranges, 12, 6, device="cpu", dtype="float64")
    for t, r, v in zip(trees, ranges, out):
        ref = _reference(t, r, 12, 6)
        assert v.shape == ref.shape == (2, 2, 1326)
        # the same iterates: float64 rounding only (a swapped player or a wrong board's strengths is O(pot))
        assert np.abs(v - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(ref).max() > 0.01 * t.root.pot


def test_batch_splits_and_float32(groups):
    trees, ranges = groups
    whole = solve_river_trees(trees, ranges, 8, 4, device="cpu", dtype="float64")
    split = solve_river_trees(trees, ranges, 8, 4, device="cpu", dtype="float64", max_rows=3)  # 2 rows per group
    for a, b in zip(whole, split):
        assert np.array_equal(a, b)
    for iterations, tol in ((1, 1e-5), (8, 1e-3)):
        f64 = solve_river_trees(trees, ranges, iterations, 0, device="cpu", dtype="float64")
        f32 = solve_river_trees(trees, ranges, iterations, 0, device="cpu", dtype="float32")
        for t, r, a, c in zip(trees, ranges, f64, f32):
            # range-weighted |float32 - float64| as a fraction of the pot.  One iteration: rounding (measured <= 1e-6).
            # Later CFR+ sends exactly indifferent hands different ways under either rounding (as numpy against
            # torch): measured up to 7e-5 after 8 iterations, 3e-4 after 50; the compiled river path differs from
            # these targets by ~4e-3 and a wrong side or sign by > 0.25
            assert float((np.abs(a - c) * r).sum() / r.sum()) / t.root.pot < tol


def test_bad_input(groups):
    trees, ranges = groups
    by = {}
    for t, r in zip(trees, ranges):
        by.setdefault(tree_signature(t), (t, r))
    (t1, r1), (t2, r2) = list(by.values())[:2]
    with pytest.raises(ValueError, match="different shapes"):
        MultiBoardRiverSolver([t1, t2], [r1, r2], device="cpu")
    with pytest.raises(ValueError, match="one ranges array per tree"):
        MultiBoardRiverSolver([t1], [r1, r2], device="cpu")
    with pytest.raises(ValueError, match="shape"):
        MultiBoardRiverSolver([t1], [r1[:, :, :10]], device="cpu")
    with pytest.raises(ValueError, match="dtype"):
        MultiBoardRiverSolver([t1], [r1], device="cpu", dtype="float16")
    g = load("holdem")
    turn = street_tree(g, sizing_levels(None), (0, 5, 10, 15), 200.0, True)
    with pytest.raises(ValueError, match="river trees"):
        MultiBoardRiverSolver([turn], [np.ones((2, 1326))], device="cpu")
    assert rows_for_memory(t1, 10 * bytes_per_row(t1)) == 10 and rows_for_memory(t1, 1.0) == 1


def test_out_of_memory_splits_the_batch(groups, monkeypatch):
    """A batch that runs out of CUDA memory is solved in halves, with the same values."""
    from cfrkit.solvers.public import torch_batch

    trees, ranges = groups
    whole = solve_river_trees(trees, ranges, 3, 1, device="cpu", dtype="float64")
    real_run = torch_batch.MultiBoardRiverSolver.run
    seen = []

    def run(self, iterations):
        seen.append(self.B)
        if self.B > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real_run(self, iterations)

    monkeypatch.setattr(torch_batch.MultiBoardRiverSolver, "run", run)
    split = solve_river_trees(trees, ranges, 3, 1, device="cpu", dtype="float64")
    assert max(seen) > 2 and seen.count(2) >= len(trees)          # tried whole, then one tree (2 rows) at a time
    for a, b in zip(whole, split):
        assert np.array_equal(a, b)


def test_plan_batches_are_the_solves(groups):
    """plan_batches: every tree once, one tree shape per batch, at most max_rows rows (a larger tree alone), the
    input order; solving its batches one by one gives solve_river_trees' values exactly (gpu_check times them so)."""
    from cfrkit.solvers.public.torch_batch import plan_batches

    trees, ranges = groups
    for max_rows in (None, 1, 3, 4):
        batches = plan_batches(trees, ranges, "cpu", max_rows=max_rows)
        assert sorted(k for b in batches for k in b) == list(range(len(trees)))
        for b in batches:
            assert len({tree_signature(trees[k]) for k in b}) == 1 and b == sorted(b)
            assert max_rows is None or len(b) == 1 or sum(len(ranges[k]) for k in b) <= max_rows
    assert len(plan_batches(trees, ranges, "cpu")) == len({tree_signature(t) for t in trees})
    assert all(len(b) == 1 for b in plan_batches(trees, ranges, "cpu", max_rows=1))   # 2 rows per tree: alone
    ref = solve_river_trees(trees, ranges, 5, 2, device="cpu", dtype="float64", max_rows=3)
    for b in plan_batches(trees, ranges, "cpu", max_rows=3):
        s = MultiBoardRiverSolver([trees[k] for k in b], [ranges[k] for k in b], skip=2, device="cpu",
                                  dtype="float64").run(5)
        vals = s.average_root_values().numpy()
        for j, k in enumerate(b):
            assert np.array_equal(vals[2 * j:2 * j + 2], ref[k])
    with pytest.raises(ValueError, match="one ranges array per tree"):
        plan_batches(trees, ranges[:-1], "cpu")
