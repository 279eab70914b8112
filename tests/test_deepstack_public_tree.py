"""Public-tree range solver: agreement with the compiled-tree CFR+ and exact evaluation, kernels, backends."""
import numpy as np
import pytest

from cfrkit.evaluation import best_response_value, expected_values, exploitability
from cfrkit.games import load
from cfrkit.solvers import CFRSolver
from cfrkit.solvers.public.games import RiverPublicGame, holdem_hands, public_game_for
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree, strategy_to_policy
from cfrkit.solvers.public.terminal_values import DenseTerminal, SortedTerminal
from cfrkit.solvers.public.array_backend import make_backend


def _policy_to_tree_strategy(tree, policy, solver):
    """TabularPolicy -> public-tree strategy in the solver's layout."""
    out = {}
    for i in tree.decision_nodes:
        n = tree.nodes[i]
        s = np.full((1, len(n.actions), tree.num_hands), 1.0 / len(n.actions))
        mask = tree.pgame.hand_mask(n.board)
        for h in range(tree.num_hands):
            if mask[h]:
                probs = policy.table[tree.pgame.infoset_key(n.state, n.player, h)]
                s[0, :, h] = [probs[a] for a in n.actions]
        out[i] = s
    return solver.from_numpy_strategy(out)


def test_cfr_plus_iterates_agree_with_compiled_tree():
    # (limit Leduc: in no-limit Leduc some actions tie exactly, e.g. folding or calling an all-in worth
    # -900 either way, and the two solvers' rounding breaks the tie differently from the first iteration)
    game = load("leduc")
    tree = build_public_tree(game)
    public = RangeSolver(tree, algorithm="cfr+")
    compiled = CFRSolver(game, algorithm="cfr+")
    for target in (1, 2, 5, 20, 60):
        public.run(target)
        compiled.run(target)
        pol = strategy_to_policy(tree, public.to_numpy_strategy())
        ref = exploitability(game, compiled.average_policy())
        # exploitability of the same algorithm's iterates: exact evaluator and public-tree best response
        assert exploitability(game, pol) == pytest.approx(ref, abs=1e-6)
        assert public.exploitability()[0] == pytest.approx(ref, abs=1e-6)
        assert public.root_values()[0, 0] == pytest.approx(expected_values(game, compiled.average_policy())[0],
                                                           abs=1e-6)


def test_dcfr_iterates_agree_with_compiled_tree():
    game = load("leduc")
    tree = build_public_tree(game)
    public = RangeSolver(tree, algorithm="dcfr").run(30)
    compiled = CFRSolver(game, algorithm="dcfr").run(30)
    ref = exploitability(game, compiled.average_policy())
    assert public.exploitability()[0] == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("game_string", ["leduc", "leduc_nolimit"])
def test_equilibrium_values_agree(game_string):
    """Values and best responses of a converged compiled-tree CFR+ profile, evaluated on the public tree."""
    game = load(game_string)
    compiled = CFRSolver(game, algorithm="cfr+").run(1000)
    policy = compiled.average_policy()
    tree = build_public_tree(game)
    solver = RangeSolver(tree)
    strat = _policy_to_tree_strategy(tree, policy, solver)
    values = solver.root_values(strat)[0]
    ref = expected_values(game, policy)
    assert values == pytest.approx(ref, abs=1e-6)
    ranges = solver.root_ranges()
    z = solver.pair_mass(ranges)[0]
    for p in (0, 1):
        br = solver.best_response_values(p, strat)
        br_value = float((ranges[:, p] * br).sum()) / z
        assert br_value == pytest.approx(best_response_value(game, policy, p), abs=1e-6)
    if game_string == "leduc":
        assert values[0] == pytest.approx(-0.0856, abs=2e-3)
    if game_string == "leduc":
        # the public-tree solver converges to the same value (within the two profiles' exploitabilities)
        own = RangeSolver(tree).run(300)
        bound = own.exploitability()[0] + exploitability(game, policy)
        assert own.root_values()[0, 0] == pytest.approx(ref[0], abs=2 * bound)


def test_torch_backend_matches_numpy():
    game = load("leduc")
    tree = build_public_tree(game)
    rng = np.random.default_rng(3)
    ranges = rng.random((3, 2, 6))
    a = RangeSolver(tree, ranges=ranges, backend="numpy").run(25)
    b = RangeSolver(tree, ranges=ranges, backend="torch", device="cpu").run(25)
    sa, sb = a.to_numpy_strategy(), b.to_numpy_strategy()
    for i in sa:
        np.testing.assert_allclose(sa[i], sb[i], atol=1e-10)
    np.testing.assert_allclose(a.exploitability(), b.exploitability(), atol=1e-10)


def test_batched_solve_equals_separate_solves():
    game = load("leduc")
    tree = build_public_tree(game)
    rng = np.random.default_rng(4)
    ranges = rng.random((2, 2, 6))
    both = RangeSolver(tree, ranges=ranges).run(15)
    for b in range(2):
        one = RangeSolver(tree, ranges=ranges[b]).run(15)
        s1, s2 = one.to_numpy_strategy(), both.to_numpy_strategy()
        for i in s1:
            np.testing.assert_allclose(s1[i][0], s2[i][b], atol=1e-12)


def test_sorted_showdown_kernel_matches_dense_with_card_removal():
    hands = holdem_hands()
    rng = np.random.default_rng(0)
    board = [3, 17, 22, 40, 51]
    strengths = rng.integers(0, 60, 1326)  # many ties
    be = make_backend("numpy")
    dense, fast = DenseTerminal(hands, board, strengths, be), SortedTerminal(hands, board, strengths, be)
    pi = rng.random((3, 1326))
    np.testing.assert_allclose(fast.showdown(pi), dense.showdown(pi), atol=1e-9)
    np.testing.assert_allclose(fast.compatible_mass(pi), dense.compatible_mass(pi), atol=1e-9)
    from cfrkit.solvers.public.terminal_values import CardsKernelTerminal

    cards = CardsKernelTerminal(board, strengths, be)
    np.testing.assert_allclose(cards.showdown(pi), dense.showdown(pi), atol=1e-9)
    np.testing.assert_allclose(cards.compatible_mass(pi), dense.compatible_mass(pi), atol=1e-9)
    # a hand that holds a board card has value 0; two hands sharing a card never meet
    blocked = np.nonzero((hands == 3).any(1))[0][0]
    assert fast.showdown(pi)[0, blocked] == 0
    single = np.zeros((1, 1326))
    single[0, 0] = 1.0  # hand (0, 1)
    shares = np.nonzero((hands == 0).any(1) | (hands == 1).any(1))[0]
    assert np.all(fast.compatible_mass(single)[0, shares] == 0)


def test_river_public_game_tree_and_zero_sum():
    strengths = np.arange(1326) % 97
    river = RiverPublicGame([0, 5, 10, 15, 20], strengths, pot=100, stack=200, bet_fractions=[(0.5, 1.0), (1.0,)])
    tree = build_public_tree(river)
    counts = tree.counts()
    assert counts["fold"] > 0 and counts["showdown"] > 0
    early = RangeSolver(tree, algorithm="dcfr").run(10).exploitability()[0]
    solver = RangeSolver(tree, algorithm="dcfr").run(50)
    values = solver.root_values()[0]
    assert values.sum() == pytest.approx(0.0, abs=1e-9)
    # DCFR reaches 6.44 chips after 10 iterations and 0.505 after 50 (pot 100): bounds near those
    assert 0 < solver.exploitability()[0] < 0.6 and early < 7.0 and solver.exploitability()[0] < early / 10


@pytest.mark.parametrize("algorithm", ["dcfr", "cfr+"])
def test_compiled_river_solver_matches_numpy_solver(algorithm):
    from cfrkit.cards.equity import board_strengths
    from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver, solve_many

    board = [51, 37, 26, 12, 1]
    river = RiverPublicGame(board, board_strengths(board), pot=100, stack=150, bet_fractions=[(0.5, 1.0)])
    tree = build_public_tree(river)
    rng = np.random.default_rng(2)
    ranges = rng.random((2, 1326))
    ref = RangeSolver(tree, ranges=ranges, algorithm=algorithm).run(12)
    fast = FlatRangeSolver(tree, ranges=ranges, algorithm=algorithm)
    curve = fast.run(12, check_every=4)
    a, b = ref.to_numpy_strategy(), fast.average_strategy()
    for i in a:
        np.testing.assert_allclose(b[i], a[i], atol=1e-9)
    assert fast.exploitability() == pytest.approx(ref.exploitability()[0], rel=1e-9)
    assert len(curve) == 3 and curve[-1] == pytest.approx(fast.exploitability(), rel=1e-12)
    # the river game is zero-sum and exploitability falls with iterations
    more = solve_many(tree, np.stack([ranges, ranges]), 60, threads=2, algorithm=algorithm).solvers
    assert more[0].exploitability() == pytest.approx(more[1].exploitability(), rel=1e-12)
    assert more[0].exploitability() < fast.exploitability()


class _FixedContinuation:
    """Leaf values of a fixed strategy below the leaves (read from a full-tree strategy), for any ranges."""

    def __init__(self, pgame, full_tree, full_strategy):
        self.pgame, self.full_tree, self.full_strategy = pgame, full_tree, full_strategy
        self._solvers = {}

    def __call__(self, leaves, reach0, reach1, backend):
        out0, out1 = [], []
        for k, leaf in enumerate(leaves):
            if leaf.index not in self._solvers:
                sub = build_public_tree(self.pgame, leaf.state)
                strat = {i: self.full_strategy[self.full_tree.node_at(leaf.history + sub.nodes[i].history).index]
                         for i in sub.decision_nodes}
                self._solvers[leaf.index] = (RangeSolver(sub), strat)
            solver, strat = self._solvers[leaf.index]
            vals, _ = solver.node_values(strat, root_ranges=np.stack([reach0[k], reach1[k]], 1))
            out0.append(vals[0][0])
            out1.append(vals[0][1])
        return np.stack(out0), np.stack(out1)


@pytest.mark.parametrize("game_string", ["leduc", "leduc_nolimit"])
def test_depth_limited_tree_with_fixed_continuation_equals_full_tree(game_string):
    """Leaves + board chance reproduce the full tree exactly when the play below the leaves is fixed."""
    game = load(game_string)
    pgame = public_game_for(game)
    full_tree = build_public_tree(pgame)
    rng = np.random.default_rng(1)
    strategy = {}
    for i in full_tree.decision_nodes:  # a random behaviour strategy everywhere, (A, 1, H)
        s = rng.random((len(full_tree.nodes[i].actions), 1, pgame.num_hands)) + 0.05
        strategy[i] = s / s.sum(0, keepdims=True)
    full = RangeSolver(full_tree)
    limited = RangeSolver(build_public_tree(pgame, depth_limit=True),
                          leaf_values=_FixedContinuation(pgame, full_tree, strategy))
    trunk = {i: strategy[full_tree.node_at(limited.tree.nodes[i].history).index] for i in limited.tree.decision_nodes}
    full_vals, _ = full.node_values(strategy)
    limited_vals, _ = limited.node_values(trunk)
    for p in (0, 1):
        np.testing.assert_allclose(limited_vals[0][p], full_vals[0][p], rtol=1e-10, atol=1e-10)
        # best responses in the trunk (the continuation stays fixed) never beat the full-tree best response
        br_limited = limited.best_response_values(p, trunk)
        br_full = full.best_response_values(p, strategy)
        assert np.all(br_limited <= br_full + 1e-9)
        assert np.all(br_limited >= limited_vals[0][p] - 1e-9)
