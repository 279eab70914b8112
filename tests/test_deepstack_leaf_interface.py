"""The value-net leaf interface (normalisation, buckets, units, player order) checked with exact values.

:class:`SolvedBucketModel` answers the net's inputs by solving each situation exactly, so any difference
between it (through :class:`NetLeafValues`) and :class:`ExactContinuationValues` (exact leaves in chips) is an
interface error.
"""
import numpy as np
import torch

from cfrkit.games import load
from cfrkit.solvers.public.array_backend import make_backend
from cfrkit.solvers.public.games import public_game_for
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree
from cfrkit.solvers.public.leaf_functions import ExactContinuationValues
from cfrkit.value_nets.bucketing import LeducBucketer
from cfrkit.value_nets.leaf_values import NetLeafValues
from cfrkit.value_nets.model import ValueNet
from cfrkit.value_nets.oracle import SolvedBucketModel

GAME = load("leduc_nolimit")
PGAME = public_game_for(GAME)


def _leaves_and_ranges(suit):
    tree = build_public_tree(PGAME, depth_limit=True)
    leaves = [tree.nodes[i] for i in tree.leaf_nodes if tree.nodes[i].board[0] % 2 == suit]
    rng = np.random.default_rng(3)
    # ranges whose totals are powers of two, so normalising them is exact in floating point and the
    # inner CFR+ solves of both paths run on bit-identical inputs (CFR+ is chaotic under rounding)
    r = np.zeros((2, len(leaves), 2, 6))
    for p in (0, 1):
        for k, leaf in enumerate(leaves):
            for b, scale in enumerate((1.0, 0.25)):
                hands = [h for h in range(6) if h != leaf.board[0]]
                weights = rng.permutation([8, 4, 2, 1, 1])  # sums to 16
                r[p, k, b, hands] = weights / 16.0 * scale
    return leaves, r[0], r[1]


def test_net_interface_with_exact_values_equals_exact_leaves():
    leaves, r0, r1 = _leaves_and_ranges(0)
    be = make_backend("numpy")
    exact0, exact1 = ExactContinuationValues(PGAME, iterations=40)(leaves, r0, r1, be)
    oracle = NetLeafValues(SolvedBucketModel(GAME, 1200.0, iterations=40), LeducBucketer(6, 2), 1200.0)
    via0, via1 = oracle(leaves, r0, r1, be)
    assert {leaf.board[0] for leaf in leaves} == {0, 2, 4}
    assert {leaf.contrib[0] for leaf in leaves} == {100.0, 300.0, 900.0}
    assert np.abs(exact0).max() > 10.0 and np.abs(exact1).max() > 10.0
    np.testing.assert_allclose(via0, exact0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(via1, exact1, rtol=0, atol=1e-6)


def test_net_never_gets_an_empty_range():
    """CFR meets leaves one player never reaches; the net must still get a normalised range there."""
    seen = []

    class Recorder(ValueNet):
        def forward(self, inputs):
            seen.append(inputs.detach().clone())
            return super().forward(inputs)

    torch.manual_seed(0)
    leaf_fn = NetLeafValues(Recorder(18, (8, 8, 8)), LeducBucketer(6, 2), 1200.0)
    tree = build_public_tree(PGAME, depth_limit=True)
    solver = RangeSolver(tree, leaf_values=leaf_fn).run(5)
    x = torch.cat(seen)
    sums = torch.stack([x[:, :18].sum(1), x[:, 18:36].sum(1)], 1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)
    # and the situation does arise: some leaf has a player with zero reach after a few iterations
    reach = solver._forward(solver.sigma)
    assert any(float(reach[i][p].sum()) == 0.0 for i in tree.leaf_nodes for p in (0, 1))
    # with the old behaviour the empty range reached the net as zeros
    seen.clear()
    leaf_fn.empty_range = "zeros"
    RangeSolver(tree, leaf_values=leaf_fn).run(5)
    x = torch.cat(seen)
    assert (x[:, :36].reshape(-1, 2, 18).sum(-1) == 0).any()


def test_targets_of_zero_reach_hands_are_best_response_values():
    """A hand a player never brings to a situation must get its best-response value as target, not the
    value of the untrained (uniform) average strategy: depth-limited CFR reads it to decide whether to
    bring the hand there."""
    from cfrkit.value_nets.data import solve_situations

    ranges = np.array([[[0, 0.3, 0.2, 0.2, 0.3, 0.0], [0, 0.2, 0.2, 0.2, 0.2, 0.2]]])  # board 0, no hand 5 for p0
    boards, contribs = np.array([0]), np.array([300.0])
    values = solve_situations(GAME, boards, contribs, ranges, 400, 200, targets="average_values")
    solver = RangeSolver(build_public_tree(PGAME, PGAME.round_start_state(0, 300.0)), ranges=ranges, skip=200).run(400)
    br = solver.best_response_values(0)[0] / 600.0
    assert abs(values[0, 0, 5] - br[5]) < 0.005
    assert abs(values[0, 0, 5] - values[0, 0, 4]) < 0.005  # hands 4 and 5 are the same rank
    old = solve_situations(GAME, boards, contribs, ranges, 400, 200, targets="average_strategy")
    assert br[5] - old[0, 0, 5] > 0.03  # the average strategy's value understates it
