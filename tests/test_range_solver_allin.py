"""RangeSolver(allin_equity=...): all-in run-outs valued by the board's all-in equity matrix.

* on a full-deck turn spot (44 river cards per all-in line) and on small flop spots (reduced decks: the
  depth-limited tree and the full tree to showdown, whose all-in nodes sit on two boards), the solver with
  the option runs the same iterates as walking the run-outs: regrets, average strategies, DeepStack's
  averaged root cfvs, best-response values and exploitability to 1e-9 of the largest value (float64); a
  wrong payoff sign, missing card removal or a missing pot term at the all-in nodes would break these;
* the torch backend (CPU here, CUDA when present) gives the numpy backend's values with the option;
* the option's default: on for hold'em trees with all-in run-outs (their subtrees are then never set up),
  off (nothing to do) without run-outs; True on a non-hold'em game and non-bool values are refused;
* per-node outputs hold None below all-in nodes; track_node_values and resolve() still work;
* datagen's numpy path on a full-deck flop group equals the compiled BoardLeafSolver ("board64").
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.games import load
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.tree import ALLIN_NODE, SHOWDOWN_NODE, RangeSolver, build_public_tree

from test_board_leaf_cfr import FLOP, known_leaf_fn


def full_turn_spot(seed=1):
    g = PostflopPublicGame("AsKhTs9h", 100, 300, "50%, a")
    tree = build_public_tree(g, depth_limit=True)
    ranges = np.random.default_rng(seed).random((2, 2, 1326)) * g.hand_mask(tree.root.board)
    return g, tree, ranges


def reduced_spot(board, deck, depth_limit, seed=1, sizes="50%, a"):
    g = PostflopPublicGame(board, 100, 300, sizes, deck=parse_cards(deck))
    tree = build_public_tree(g, depth_limit=depth_limit)
    ranges = np.random.default_rng(seed).random((2, 1326)) * g.hand_mask(tree.root.board)
    return g, tree, ranges


def assert_same_solve(g, tree, ranges, leaf_fn, iterations=8, algorithm="cfr+", tol=1e-9, backend="numpy"):
    """Both solvers side by side: regrets after every iteration, then averages, BR values (hands of the game)."""
    kw = dict(ranges=ranges, algorithm=algorithm, skip=2, leaf_values=leaf_fn)
    walk = RangeSolver(tree, allin_equity=False, **kw)
    eq = RangeSolver(tree, allin_equity=True, backend=backend, device="cpu" if backend == "torch" else None, **kw)
    assert walk.allin_nodes == [] and eq.allin_nodes and eq.allin_equity
    live = g.hand_mask(tree.root.board) > 0  # RangeSolver values hands outside a reduced deck too (reach 0)
    to_np = eq.be.to_numpy
    for _ in range(iterations):
        walk.iterate(1)
        eq.iterate(1)
        for i in tree.decision_nodes:
            scale = max(1.0, np.abs(walk.regrets[i]).max())
            assert np.abs(to_np(eq.regrets[i])[..., live] - walk.regrets[i][..., live]).max() <= tol * scale
    want, got = walk.average_root_values(), to_np(eq.average_root_values())
    scale = np.abs(want[..., live]).max()
    assert scale > 0
    assert np.abs(got[..., live] - want[..., live]).max() <= tol * scale
    ws, gs = walk.to_numpy_strategy(), eq.to_numpy_strategy()
    assert max(np.abs(ws[k][..., live] - gs[k][..., live]).max() for k in ws) <= 1e-9
    for p in (0, 1):
        bw = walk.best_response_values(p)
        bg = to_np(eq.best_response_values(p))
        assert np.abs(bg[..., live] - bw[..., live]).max() <= tol * np.abs(bw[..., live]).max()
    return walk, eq


def test_turn_spot_same_iterates_as_walking_the_runouts():
    g, tree, ranges = full_turn_spot()
    walk, eq = assert_same_solve(g, tree, ranges, known_leaf_fn())
    # the run-outs below the all-in nodes are never set up: only the root board's terminal kernel remains
    assert len(walk._terminals) > 40 and list(eq._terminals) == [tree.root.board]
    below = [i for i, r in enumerate(eq._role) if r == ALLIN_NODE]
    assert below == eq.allin_nodes and all(tree.nodes[tree.nodes[i].parent].kind == "decision" for i in below)


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_reduced_flop_spot_same_iterates(algorithm):
    g, tree, ranges = reduced_spot(*FLOP, depth_limit=True)
    assert_same_solve(g, tree, ranges, known_leaf_fn(), algorithm=algorithm)


def test_full_flop_tree_allin_nodes_on_two_boards():
    """Without a depth limit the all-in nodes sit on the flop (turn and river to come) and on every turn card
    (river to come): one matrix per board.  Evaluations of one profile (a few CFR+ iterations' average) agree:
    every node's cfvs, best responses, exploitability, root values.  (Iterates are not compared on this tiny
    deck: some hands tie exactly, regret 0 against 1e-13 from the other summation order, and CFR+ parts ways.)"""
    g, tree, ranges = reduced_spot(*FLOP, depth_limit=False, sizes="a")  # bets: all in only
    walk = RangeSolver(tree, ranges=ranges, allin_equity=False).run(4)
    eq = RangeSolver(tree, ranges=ranges)
    boards = {len(tree.nodes[i].board) for i in eq.allin_nodes}
    assert boards == {3, 4} and len(eq._allin_groups) > 2
    strategy = walk.average_strategy()
    vw, _ = walk.node_values(strategy)
    ve, _ = eq.node_values(strategy)
    compared = 0
    for n in tree.nodes:
        if ve[n.index][0] is None:
            continue
        live = g.hand_mask(n.board) > 0
        for p in (0, 1):
            scale = max(1e-12, np.abs(vw[n.index][p][..., live]).max())
            assert np.abs(ve[n.index][p][..., live] - vw[n.index][p][..., live]).max() <= 1e-9 * scale
        compared += 1
    assert 0 < compared < len(tree.nodes)
    live = g.hand_mask(tree.root.board) > 0
    for p in (0, 1):
        bw = walk.best_response_values(p, strategy)[..., live]
        assert np.abs(eq.best_response_values(p, strategy)[..., live] - bw).max() <= 1e-9 * np.abs(bw).max()
    assert np.allclose(eq.exploitability(strategy), walk.exploitability(strategy), rtol=1e-9, atol=0)
    assert np.allclose(eq.root_values(strategy), walk.root_values(strategy), rtol=1e-9, atol=1e-12)


def test_torch_equals_numpy_with_allin_equity():
    pytest.importorskip("torch")
    g, tree, ranges = full_turn_spot()
    numpy_fn = known_leaf_fn()

    def fn(leaves, r0, r1, be):  # the leaf function on the solver's backend (numpy in the test's function)
        v0, v1 = numpy_fn(leaves, be.to_numpy(r0), be.to_numpy(r1), be)
        return be.asarray(v0), be.asarray(v1)

    out = []
    for backend in ("numpy", "torch"):
        s = RangeSolver(tree, ranges=ranges, skip=2, leaf_values=fn, backend=backend,
                        device="cpu" if backend == "torch" else None)
        assert s.allin_equity  # the default on a hold'em tree with run-outs
        s.run(4)
        out.append(s.be.to_numpy(s.average_root_values()))
    live = g.hand_mask(tree.root.board) > 0
    assert np.abs(out[0][..., live] - out[1][..., live]).max() <= 1e-9 * np.abs(out[0]).max()


def test_default_and_bad_input():
    g, tree, ranges = full_turn_spot()
    fn = known_leaf_fn()
    assert RangeSolver(tree, ranges=ranges, leaf_values=fn).allin_equity
    river = build_public_tree(PostflopPublicGame("AsKhTs9h2c", 100, 300, "50%, a"))
    assert not RangeSolver(river).allin_equity and RangeSolver(river, allin_equity=True).allin_nodes == []
    leduc = build_public_tree(load("leduc"))
    assert not RangeSolver(leduc).allin_equity
    with pytest.raises(ValueError, match="52-card hold'em"):
        RangeSolver(leduc, allin_equity=True)
    with pytest.raises(ValueError, match="True, False or None"):
        RangeSolver(tree, ranges=ranges, leaf_values=fn, allin_equity="yes")


def test_node_outputs_below_allin_nodes_and_tracking():
    g, tree, ranges = full_turn_spot()
    fn = known_leaf_fn()
    s = RangeSolver(tree, ranges=ranges[0], leaf_values=fn, track_node_values=True)
    walk = RangeSolver(tree, ranges=ranges[0], leaf_values=fn, track_node_values=True, allin_equity=False)
    s.run(4)
    walk.run(4)
    vals, reach = s.node_values()
    wvals, _ = walk.node_values()
    avg, wavg = s.average_node_values(1), walk.average_node_values(1)
    live = g.hand_mask(tree.root.board) > 0
    for n in tree.nodes:
        below = tree.nodes[n.parent].index in s.allin_nodes if n.parent >= 0 else False
        below = below or (n.parent >= 0 and vals[n.parent][0] is None)
        if below:
            assert vals[n.index][0] is None and reach[n.index] is None and avg[n.index] is None
            assert n.kind in ("chance", SHOWDOWN_NODE)
        else:
            scale = np.abs(wvals[n.index][0][..., live]).max() + 1e-300
            assert np.abs(vals[n.index][0][..., live] - wvals[n.index][0][..., live]).max() <= 1e-9 * scale
            assert np.abs(avg[n.index][..., live] - wavg[n.index][..., live]).max() <= 1e-9 * (
                np.abs(wavg[n.index][..., live]).max() + 1e-300)


def test_resolve_with_allin_nodes():
    from cfrkit.solvers.public.resolving import resolve

    g, tree, ranges = full_turn_spot()
    res = resolve(g, tree.root.state, 0, ranges[0, 0], opp_range=ranges[0, 1], iterations=4, skip=1,
                  leaf_values=known_leaf_fn(), tree=tree)
    assert res.values[0].shape == (2, 1326) or res.values[0].shape == (1, 2, 1326)
    below = [i for i, v in enumerate(res.values) if v is None]
    assert below and all(tree.nodes[i].kind in ("chance", SHOWDOWN_NODE) for i in below)
    assert all(res.opp_avg_values[i] is None and res.reach[i] is None for i in below)


def test_datagen_numpy_flop_equals_board64():
    """The datagen's RangeSolver path on a full-deck flop group (9,400 run-out showdowns, now one matrix) and
    the compiled BoardLeafSolver compute the same targets."""
    from cfrkit.solvers.public.games import HoldemPublicGame
    from cfrkit.value_nets.holdem.datagen import sizing_levels, solve_group_with_leaves
    from cfrkit.value_nets.holdem.situations import sample_situations

    game = load("holdem")
    rng = np.random.default_rng(4)
    sit = sample_situations("flop", 2, rng, group=2, stack=20000.0, big_blind=100.0)
    ranges = rng.random((2, 2, 1326))  # dense ranges (no exact regret ties, see test_board_leaf_cfr)
    args = (game, sizing_levels(None), sit.boards[0], float(sit.contribs[0]), ranges, 3, 1, known_leaf_fn())
    want = solve_group_with_leaves(*args, backend="board64")
    got = solve_group_with_leaves(*args, backend="numpy")
    live = HoldemPublicGame(game).hand_mask(tuple(sit.boards[0])) > 0
    assert np.abs(want).max() > 0
    assert np.abs(got[..., live] - want[..., live]).max() <= 1e-9 * np.abs(want).max()
