"""BoardLeafSolver: the compiled range solver on depth-limited trees (value-function leaves, all-in nodes).

* on depth-limited turn and flop trees (reduced decks; the flop tree keeps its all-in run-outs in the
  numpy solver), CFR+ and DCFR iterates, average strategies and DeepStack's averaged root cfvs equal the
  numpy ``RangeSolver``'s with the same leaf function (float64 to 1e-9 of the largest value; float32
  close), the leaf function being a known non-linear function of both reaches;
* the all-in equity matrix equals an exact enumeration with the hand evaluator (full-deck turn, reduced
  flop), and is antisymmetric;
* the direct path for hold'em value nets equals the generic call of the same net;
* spots solved side by side (batched ranges) equal their own solves (generic leaf function and net);
* the datagen's ``board64`` backend equals its ``numpy`` backend on a full-deck turn situation;
* bad input is refused with clear errors (BoardRangeSolver refuses leaves).
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.cards.equity import board_strengths
from cfrkit.games.base import GameError
from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver, allin_equity_matrix, allin_runouts
from cfrkit.solvers.public.board_range_cfr import BoardLayout, BoardRangeSolver, _kernel
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree

# reduced decks without exact ties between actions in these iterations: in tiny decks a hand can lose to
# every other on every run-out (its fold and all-in call tie exactly) or tie otherwise, and CFR+ then follows
# rounding (regret 0 in one implementation, 1e-15 in the other: different strategies from there on)
TURN = ("AsKhTs9h", "AsKsQsJsTs9sAhKhQhJh9h8c")
FLOP = ("AsKhTs", "AsKhTs2c2d3c3d7c7d9h")


def known_leaf_fn(seed=0):
    """A leaf value function: non-linear (and smooth) in both reaches, per hand and leaf, deterministic."""
    tab = np.random.default_rng(seed).normal(size=1326)

    def fn(leaves, r0, r1, backend):
        r0, r1 = np.asarray(r0), np.asarray(r1)
        pot = np.array([leaf.contrib[0] for leaf in leaves])[:, None, None]
        card = np.array([leaf.board[-1] for leaf in leaves])[:, None, None] / 52.0
        m0, m1 = r0.sum(-1, keepdims=True), r1.sum(-1, keepdims=True)
        # smooth in the reach (a step such as r0 > 0 would turn rounding-level differences into large ones)
        v0 = pot * ((tab + card) * m1 + 0.3 * r1 * r0 / (r0 + 1e-3))
        v1 = pot * (-(tab - card) * m0 + 0.2 * r0 * r0 * m0 / (m0 * m0 + 1e-9))
        return v0, v1

    return fn


def spot(board, deck, seed=1):
    g = PostflopPublicGame(board, 100, 300, "50%, a", deck=parse_cards(deck))
    tree = build_public_tree(g, depth_limit=True)
    ranges = np.random.default_rng(seed).random((2, 1326)) * g.hand_mask(tree.root.board)
    return g, tree, ranges


@pytest.mark.parametrize("board,deck", [TURN, FLOP], ids=["turn", "flop"])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_iterates_equal_numpy_range_solver(board, deck, algorithm):
    g, tree, ranges = spot(board, deck)
    assert tree.leaf_nodes
    fn = known_leaf_fn()
    ref = RangeSolver(tree, ranges=ranges, algorithm=algorithm, skip=3, leaf_values=fn)
    ref.run(12)
    want_values = ref.average_root_values()[0]
    want_strategy = ref.to_numpy_strategy()
    live = g.hand_mask(tree.root.board) > 0
    scale = np.abs(want_values[:, live]).max()
    for dtype, tol in (("float64", 1e-9), ("float32", 2e-4)):
        s = BoardLeafSolver(tree, ranges=ranges, leaf_values=fn, algorithm=algorithm, skip=3, dtype=dtype)
        s.run(5)
        s.run(7)  # runs continue where they stopped
        assert s.iterations == 12
        got = s.average_root_values()
        assert np.abs(got[:, live] - want_values[:, live]).max() <= tol * scale, dtype
        assert np.all(got[:, ~live] == 0)
        avg = s.average_strategy()
        assert set(avg) == set(want_strategy)
        for k, a in avg.items():
            m = g.hand_mask(tree.nodes[k].board) > 0
            assert np.abs(a[0][:, m] - want_strategy[k][0][:, m]).max() <= (1e-9 if dtype == "float64" else 1e-3)
    # the all-in lines are one node each in the kernel (the numpy tree walks their run-outs)
    lay = BoardLayout.of(tree, False, leaves=True)
    assert np.sum(lay.node_type == 5) > 0 and not np.any(lay.node_type == 2)
    assert np.sum(lay.node_type == 4) == len(tree.leaf_nodes)


def test_allin_matrix_same_bits_in_both_kernel_builds():
    """allin_equity_matrix calls the float32 build's allin_matrix (the module a default solve has loaded); the
    matrix is float64 in both builds and must be the same bits as the float64 build's (the turn pins rest on it)."""
    from cfrkit._kernels import range_cfr_board, range_cfr_board32

    rng = np.random.default_rng(3)
    H, R = 300, 44
    cards = np.sort(rng.choice(52, (H, 2)), axis=1).astype(np.int64)
    strengths = rng.integers(1, 400, (R, H)).astype(np.int32)
    live = (rng.random((R, H)) > 0.1).astype(np.uint8)
    a = range_cfr_board.allin_matrix(cards, strengths, live, 1 / 44)
    b = range_cfr_board32.allin_matrix(cards, strengths, live, 1 / 44)
    assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b) and np.abs(a).max() > 0


def test_allin_matrix_is_exact_enumeration():
    # full-deck turn: probability 1/44 per river card given both hands
    g = PostflopPublicGame("8dAs8sKh", 4000, 18000, "100%, a")
    tree = build_public_tree(g, depth_limit=True)
    lay = BoardLayout.of(tree, False, leaves=True)
    allin = [lay.order[k] for k in lay.ext_nodes if lay.node_type[k] == 5]
    assert allin
    assert len(allin_runouts(tree, allin[0])) == 48
    pairs = lay.root_pairs
    M = allin_equity_matrix(tree, allin[0], pairs)
    assert np.abs(M + M.T).max() < 1e-12
    hc = g.hand_cards
    board = list(tree.root.board)
    rng = np.random.default_rng(0)
    for _ in range(12):
        i, j = rng.choice(len(pairs), 2, replace=False)
        a, b = hc[pairs[i]], hc[pairs[j]]
        if set(a) & set(b):
            assert M[i, j] == 0
            continue
        total = 0.0
        for c in range(52):
            if c in board or c in a or c in b:
                continue
            st = board_strengths(board + [c])
            total += np.sign(int(st[pairs[i]]) - int(st[pairs[j]])) / 44.0
        assert M[i, j] == pytest.approx(total, abs=1e-12)
    # reduced-deck flop: ordered (turn, river) run-outs with the tree's probabilities, merged per board
    g, tree, _ = spot(*FLOP)
    lay = BoardLayout.of(tree, False, leaves=True)
    node = [lay.order[k] for k in lay.ext_nodes if lay.node_type[k] == 5][0]
    pairs = lay.root_pairs
    M = allin_equity_matrix(tree, node, pairs)
    deck = [c for c in parse_cards(FLOP[1]) if c not in tree.root.board]
    board = list(tree.root.board)
    hc = g.hand_cards
    for i in range(len(pairs)):
        for j in range(len(pairs)):
            a, b = set(hc[pairs[i]]), set(hc[pairs[j]])
            want = 0.0
            if not a & b:
                rest = [c for c in deck if c not in a and c not in b]
                for t in rest:
                    for r in rest:
                        if r != t:
                            st = board_strengths(board + [t, r])
                            want += np.sign(int(st[pairs[i]]) - int(st[pairs[j]])) / len(rest) / (len(rest) - 1)
            assert M[i, j] == pytest.approx(want, abs=1e-12)


def test_value_net_direct_path_equals_generic_call():
    torch = pytest.importorskip("torch")
    from cfrkit.value_nets.holdem.bucketing import make_bucketer
    from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
    from cfrkit.value_nets.model import ValueNet

    torch.manual_seed(0)
    bucketer = make_bucketer("river", "hs", 20)
    fn = HoldemNetLeafValues(ValueNet(20, hidden=(16, 16)), bucketer, 300.0, "river")
    g, tree, ranges = spot(*TURN)
    out = []
    for fast in (True, False):
        s = BoardLeafSolver(tree, ranges=ranges, leaf_values=fn, skip=2, dtype="float64", fast_nets=fast)
        assert (s.session._net is not None) == fast
        s.run(6)
        out.append(s.average_root_values())
    assert np.abs(out[0] - out[1]).max() <= 1e-5 * np.abs(out[1]).max()


def test_batched_spots_equal_their_own_solves():
    torch = pytest.importorskip("torch")
    from cfrkit.value_nets.holdem.bucketing import make_bucketer
    from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
    from cfrkit.value_nets.model import ValueNet

    g, tree, _ = spot(*FLOP)
    ranges = np.random.default_rng(5).random((3, 2, 1326)) * g.hand_mask(tree.root.board)
    torch.manual_seed(1)
    net = HoldemNetLeafValues(ValueNet(12, hidden=(16,)), make_bucketer("turn", "ehs", 12), 300.0, "turn")
    for fn, tol in ((known_leaf_fn(), 1e-12), (net, 1e-5)):
        batch = BoardLeafSolver(tree, ranges=ranges, leaf_values=fn, skip=2, dtype="float64")
        batch.run(6)
        got = batch.average_root_values()
        assert got.shape == (3, 2, 1326)
        for b in range(3):
            one = BoardLeafSolver(tree, ranges=ranges[b], leaf_values=fn, skip=2, dtype="float64")
            one.run(6)
            want = one.average_root_values()
            assert np.abs(got[b] - want).max() <= tol * np.abs(want).max()
            a, w = batch.average_strategy(spot=b), one.average_strategy()
            assert max(np.abs(a[k] - w[k]).max() for k in w) <= 1e-6


def test_datagen_board_backend_equals_numpy():
    from cfrkit.games.registry import load
    from cfrkit.value_nets.holdem.datagen import sizing_levels, solve_group_with_leaves
    from cfrkit.value_nets.holdem.situations import sample_situations

    game = load("holdem")
    rng = np.random.default_rng(3)
    sit = sample_situations("turn", 2, rng, group=2, stack=20000.0, big_blind=100.0)
    # dense random ranges: DeepStack's recursive ranges put many hands near 0, where an action's regret can
    # be 0 in one implementation and 1e-19 in the other (a tie: CFR+ then plays different strategies)
    ranges = rng.random((2, 2, 1326))
    args = (game, sizing_levels(None), sit.boards[0], float(sit.contribs[0]), ranges, 3, 1, known_leaf_fn())
    want = solve_group_with_leaves(*args, backend="numpy")
    got = solve_group_with_leaves(*args, backend="board64")
    from cfrkit.solvers.public.games import HoldemPublicGame

    live = HoldemPublicGame(game).hand_mask(tuple(sit.boards[0])) > 0  # RangeSolver also values dead hands
    assert np.all(got[..., ~live] == 0)
    assert np.abs(got[..., live] - want[..., live]).max() <= 1e-9 * np.abs(want).max()
    got32 = solve_group_with_leaves(*args, backend="board")
    assert np.abs(got32 - got).max() <= 1e-4 * np.abs(want).max()
    with pytest.raises(ValueError, match="unknown backend"):
        solve_group_with_leaves(*args, backend="gpu")


def test_bad_input():
    g, tree, ranges = spot(*TURN)
    with pytest.raises(GameError, match="BoardLeafSolver"):
        BoardRangeSolver(tree)
    lay = BoardLayout.of(tree, False, leaves=True)
    with pytest.raises(ValueError, match="BoardLeafSolver"):
        _kernel(np.float64).solve(lay.layout, np.zeros((2, len(lay.root_pairs))), np.zeros(lay.num_entries),
                                  np.zeros(lay.num_entries), 1, 1, 0, 1.5, 0.0, 2.0, 0, -1.0, np.zeros(1))
    with pytest.raises(ValueError, match="leaf_values"):
        BoardLeafSolver(tree, ranges=ranges)
    with pytest.raises(ValueError, match="callable"):
        BoardLeafSolver(tree, ranges=ranges, leaf_values=3)
    fn = known_leaf_fn()
    for kwargs, msg in (({"dtype": "float16"}, "dtype"), ({"algorithm": "dcfr-postflop"}, "algorithm"),
                        ({"skip": -1}, "skip"), ({"ranges": ranges[:, :10]}, "shape"),
                        ({"ranges": -ranges}, "non-negative")):
        with pytest.raises(ValueError, match=msg):
            BoardLeafSolver(tree, **{"ranges": ranges, "leaf_values": fn, **kwargs})
    s = BoardLeafSolver(tree, ranges=ranges, leaf_values=fn)
    with pytest.raises(ValueError, match="no iterations"):
        s.average_root_values()
    with pytest.raises(ValueError, match="exploitability"):
        s.run(2, check_every=1)
    with pytest.raises(GameError, match="exploitability"):
        s.exploitability()
    bad = BoardLeafSolver(tree, ranges=ranges, leaf_values=lambda leaves, r0, r1, be: (r0[:, :, :5], r1[:, :, :5]))
    with pytest.raises(ValueError, match="shape"):
        bad.run(1)
    full = PostflopPublicGame("AsKhTs9h8c", 100, 300, "50%, a", deck=parse_cards(TURN[1]))
    with pytest.raises(ValueError, match="no leaf or all-in"):
        BoardLeafSolver(build_public_tree(full))
